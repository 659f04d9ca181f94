//! PTX fundamental types as they appear in modifiers (`.u32`, `.f16x2`, `.pred`).

/// Width in bits of a type modifier, or `None` if the modifier is not a type.
pub fn type_bits(m: &str) -> Option<u32> {
    Some(match m {
        ".pred" => 1,
        ".b8" | ".u8" | ".s8" | ".e4m3" | ".e5m2" => 8,
        ".b16" | ".u16" | ".s16" | ".f16" | ".bf16" => 16,
        ".b32" | ".u32" | ".s32" | ".f32" | ".f16x2" | ".bf16x2" | ".tf32" => 32,
        ".b64" | ".u64" | ".s64" | ".f64" => 64,
        ".b128" => 128,
        _ => return None,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeClass {
    /// `.b*`: untyped bits.
    Bits,
    Unsigned,
    Signed,
    Float,
    Pred,
}

pub fn type_class(m: &str) -> Option<TypeClass> {
    type_bits(m)?;
    Some(match m.as_bytes()[1] {
        b'b' if m.starts_with(".bf16") => TypeClass::Float,
        b'b' => TypeClass::Bits,
        b'u' => TypeClass::Unsigned,
        b's' => TypeClass::Signed,
        b'p' => TypeClass::Pred,
        _ => TypeClass::Float,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_and_widths() {
        assert_eq!(type_bits(".f16x2"), Some(32));
        assert_eq!(type_class(".bf16"), Some(TypeClass::Float));
        assert_eq!(type_class(".b32"), Some(TypeClass::Bits));
        assert_eq!(type_class(".s64"), Some(TypeClass::Signed));
        assert_eq!(type_class(".global"), None);
    }
}
