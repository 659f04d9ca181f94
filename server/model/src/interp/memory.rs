//! Values, byte regions with exact float shadows, and the global memory of a launch.

use super::float::{FloatFormat, FloatVal, Rounding};
use crate::ops::mask;
use num_rational::BigRational;
use std::collections::BTreeMap;

/// Where global buffer `i` starts: `GLOBAL_BASE + i * BUFFER_STRIDE`.
pub const GLOBAL_BASE: u64 = 1 << 44;
/// Each buffer owns a window of this many bytes (64 GiB), so an overrun lands in no buffer.
pub const BUFFER_STRIDE: u64 = 1 << 36;
/// At most this many buffers (module `.global`/`.const` variables included).
pub const MAX_BUFFERS: usize = 4096;
/// Generic addresses of `.shared` variables: `SHARED_BASE + offset`. The low 32 bits of the base
/// are zero, so a 32-bit shared address (`mov.u32 %r, smem`) is the offset itself.
pub const SHARED_BASE: u64 = 1 << 50;
/// Generic addresses of `.local` variables: `LOCAL_BASE + offset`.
pub const LOCAL_BASE: u64 = 1 << 51;
/// Size of the shared and local windows.
pub const WINDOW: u64 = 1 << 32;
/// Every `.shared` (and `.local`) variable gets its own slot of this many bytes in its window,
/// so an access running off the end of one variable lands in no variable.
pub const SLOT: u64 = 1 << 24;

/// A register value: integer bits, or a float held exactly (converted to bits only when bits are
/// needed, at the width of the instruction that needs them).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bits(u64),
    /// Boxed: a register file of 16-byte values is what a replay moves and copies for every
    /// instruction; an exact rational is 64 bytes.
    Float(Box<FloatVal>),
}

impl Value {
    /// An exact float value.
    pub fn exact(f: FloatVal) -> Value {
        Value::Float(Box::new(f))
    }

    /// The value as `width`-bit integer bits; a float is rounded (nearest even) to the IEEE
    /// format of that width.
    pub fn bits(&self, width: u32) -> u64 {
        match self {
            Value::Bits(b) => b & mask(width),
            Value::Float(f) => f.to_bits(FloatFormat::for_bits(width).unwrap_or(FloatFormat::F32), Rounding::NearestEven) & mask(width),
        }
    }

    /// The value as a float of the IEEE format of `width` bits.
    pub fn float(&self, width: u32) -> FloatVal {
        match self {
            Value::Float(f) => (**f).clone(),
            Value::Bits(b) => FloatVal::from_bits(b & mask(width), FloatFormat::for_bits(width).unwrap_or(FloatFormat::F32)),
        }
    }

    pub fn bool(&self) -> bool {
        self.bits(1) != 0
    }
}

/// Bytes plus the exact values of floats stored in them: `exact[offset] = (width in bytes,
/// value)`. Any write overlapping a recorded float drops it. A region made from a [`Pattern`]
/// holds its bytes only on pages written to; elsewhere a read computes the pattern's bytes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Region {
    /// The bytes; on a patterned region, meaningful only on the pages `written` marks (the
    /// rest are zero pages the allocator has not touched).
    data: Vec<u8>,
    exact: BTreeMap<u64, (u32, FloatVal)>,
    pattern: Option<Pattern>,
    /// Per page of `PAGE` bytes, one bit: whether `data` holds it (only with a pattern).
    written: Vec<u64>,
}

/// A patterned region copies its pattern into `data` a page at a time, on the page's first write
/// or interpreter load ([`Region::load`]).
const PAGE: u64 = 4096;

/// What a buffer holds before the kernel writes it: element `i` is `elements[value(i)]`, with
/// the values constant or pseudo-random (each a function of the seed and `i` alone, so a read
/// anywhere costs the same and does not depend on what was read before). A replay's buffers
/// are up to 256 MiB for a witness with large offsets; filling them before the run took
/// 0.1–0.2 s of runs that read a few KiB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    /// Each value's element, little-endian (its first `elem_bytes` bytes).
    pub elements: [[u8; 8]; 8],
    /// 1 to 8.
    pub elem_bytes: u8,
    pub values: PatternValues,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternValues {
    /// Every element is `elements[v]` (`v` < 8).
    Constant(u8),
    /// Element `i` is `elements[random_value(seed, i)]`.
    Random(u64),
}

impl Pattern {
    /// The value (0 to 7) of element `i`.
    pub fn value(&self, i: u64) -> usize {
        match self.values {
            PatternValues::Constant(v) => v as usize % 8,
            PatternValues::Random(seed) => random_value(seed, i),
        }
    }

    /// The byte at `offset`.
    pub fn byte(&self, offset: u64) -> u8 {
        let n = self.elem_bytes.clamp(1, 8) as u64;
        self.elements[self.value(offset / n)][(offset % n) as usize]
    }

    /// `len` bytes of the pattern (the last element cut at the end).
    pub fn bytes(&self, len: u64) -> Vec<u8> {
        let mut out = vec![0; len as usize];
        self.copy_into(0, &mut out);
        out
    }

    /// Writes the pattern's bytes from `offset` on into `out`, an element at a time.
    fn copy_into(&self, offset: u64, out: &mut [u8]) {
        let n = self.elem_bytes.clamp(1, 8) as u64;
        let mut at = 0usize;
        while at < out.len() {
            let o = offset + at as u64;
            let (i, within) = (o / n, (o % n) as usize);
            let element = &self.elements[self.value(i)][within..n as usize];
            let take = element.len().min(out.len() - at);
            out[at..at + take].copy_from_slice(&element[..take]);
            at += take;
        }
    }
}

/// A pseudo-random value below 8 for element `i` of a fill seeded by `seed` (SplitMix64's
/// finalizer of the two: every bit of both reaches the result).
fn random_value(seed: u64, i: u64) -> usize {
    let mut z = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ i.wrapping_add(1).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 61) as usize
}

impl Region {
    pub fn new(data: Vec<u8>) -> Region {
        Region { data, exact: BTreeMap::new(), pattern: None, written: Vec::new() }
    }

    pub fn zeroed(len: u64) -> Region {
        Region::new(vec![0; len as usize])
    }

    /// `len` bytes of `pattern`, none of them computed yet.
    pub fn patterned(len: u64, pattern: Pattern) -> Region {
        let pages = len.div_ceil(PAGE);
        Region { data: vec![0; len as usize], exact: BTreeMap::new(), pattern: Some(pattern), written: vec![0; pages.div_ceil(64) as usize] }
    }

    /// Whether `data` holds the byte at `off`.
    fn holds(&self, off: u64) -> bool {
        let page = off / PAGE;
        self.pattern.is_none() || self.written[(page / 64) as usize] & (1 << (page % 64)) != 0
    }

    /// The byte at `off` (in bounds).
    fn byte(&self, off: u64) -> u8 {
        match &self.pattern {
            Some(p) if !self.holds(off) => p.byte(off),
            _ => self.data[off as usize],
        }
    }

    /// Makes `data` hold the pages of `off..end`.
    fn hold(&mut self, off: u64, end: u64) {
        let Some(pattern) = &self.pattern else { return };
        for page in off / PAGE..end.div_ceil(PAGE) {
            let (word, bit) = ((page / 64) as usize, 1u64 << (page % 64));
            if self.written[word] & bit == 0 {
                self.written[word] |= bit;
                let from = page * PAGE;
                let to = (from + PAGE).min(self.data.len() as u64);
                pattern.copy_into(from, &mut self.data[from as usize..to as usize]);
            }
        }
    }

    /// The bytes `off..off + len` (in bounds).
    pub fn slice(&self, off: u64, len: u64) -> std::borrow::Cow<'_, [u8]> {
        let range = off as usize..(off + len) as usize;
        if self.pattern.is_none() {
            return std::borrow::Cow::Borrowed(&self.data[range]);
        }
        std::borrow::Cow::Owned((off..off + len).map(|o| self.byte(o)).collect())
    }

    /// Writes raw bytes at `off` (in bounds), dropping the exact floats they overlap.
    pub fn write_bytes(&mut self, off: u64, bytes: &[u8]) {
        let end = off + bytes.len() as u64;
        self.hold(off, end);
        self.data[off as usize..end as usize].copy_from_slice(bytes);
        self.invalidate(off, bytes.len() as u32);
    }

    pub fn len(&self) -> u64 {
        self.data.len() as u64
    }

    pub fn contains(&self, off: u64, bytes: u32) -> bool {
        off.checked_add(bytes as u64).is_some_and(|end| end <= self.len())
    }

    /// [`Region::read`] for the interpreter: a patterned region first copies the pages read
    /// into `data` (a loop reads its inputs again and again; computing each read's bytes from
    /// the pattern made a GEMM's random-filled replays a tenth slower).
    pub fn load(&mut self, off: u64, bytes: u32) -> Value {
        self.hold(off, off + bytes as u64);
        self.read(off, bytes)
    }

    /// Reads `bytes` (≤ 8) little-endian bytes at `off` (in bounds).
    pub fn read(&self, off: u64, bytes: u32) -> Value {
        if let Some((w, f)) = self.exact.get(&off) {
            if *w == bytes {
                return Value::exact(f.clone());
            }
        }
        let mut v = 0u64;
        if self.pattern.is_none() || (self.holds(off) && self.holds(off + (bytes as u64).max(1) - 1)) {
            for k in (0..bytes as usize).rev() {
                v = (v << 8) | self.data[off as usize + k] as u64;
            }
        } else {
            for k in (0..bytes as u64).rev() {
                v = (v << 8) | self.byte(off + k) as u64;
            }
        }
        Value::Bits(v)
    }

    /// Writes a value as `bytes` (≤ 8) little-endian bytes at `off` (in bounds).
    /// Writes `v`; returns the bits written.
    pub fn write(&mut self, off: u64, bytes: u32, v: &Value) -> u64 {
        let bits = v.bits(bytes * 8);
        self.hold(off, off + bytes as u64);
        for k in 0..bytes as usize {
            self.data[off as usize + k] = (bits >> (8 * k)) as u8;
        }
        self.invalidate(off, bytes);
        if let Value::Float(f) = v {
            if FloatFormat::for_bits(bytes * 8).is_some() {
                self.exact.insert(off, (bytes, (**f).clone()));
            }
        }
        bits
    }

    fn invalidate(&mut self, off: u64, bytes: u32) {
        if self.exact.is_empty() {
            return;
        }
        let end = off + bytes as u64;
        let stale: Vec<u64> = self.exact.range(off.saturating_sub(7)..end).filter(|(&o, (w, _))| o + *w as u64 > off).map(|(&o, _)| o).collect();
        for o in stale {
            self.exact.remove(&o);
        }
    }

    /// The exact float stored at `off` with width `bytes`, if the last write there was a float.
    pub fn exact(&self, off: u64, bytes: u32) -> Option<&FloatVal> {
        self.exact.get(&off).filter(|(w, _)| *w == bytes).map(|(_, f)| f)
    }
}

/// A global buffer handle, valid for the `Memory` that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub u32);

#[derive(Clone, Debug)]
struct Buffer {
    name: String,
    region: Region,
}

/// Global memory: named buffers, each at its own base address in one 64-bit address space
/// (`base(id) = GLOBAL_BASE + id * BUFFER_STRIDE`), so pointer arithmetic works as on hardware.
/// Accessors panic on a `BufferId` from another `Memory`.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    buffers: Vec<Buffer>,
}

/// Where a global address falls.
pub(crate) enum GlobalLoc {
    In {
        buffer: usize,
        offset: u64,
    },
    /// Outside every buffer; the nearest buffer (index, its size, and the offset from its base).
    Outside {
        nearest: Option<(usize, u64, i64)>,
    },
}

macro_rules! typed {
    ($add:ident, $read:ident, $t:ty, $n:expr) => {
        #[doc = concat!("Adds a buffer of `", stringify!($t), "` values (little-endian).")]
        pub fn $add(&mut self, name: impl Into<String>, values: &[$t]) -> BufferId {
            self.add_buffer(name, values.iter().flat_map(|v| v.to_le_bytes()).collect())
        }

        #[doc = concat!("The buffer's bytes as `", stringify!($t), "` values.")]
        pub fn $read(&self, id: BufferId) -> Vec<$t> {
            self.bytes(id).chunks_exact($n).map(|c| <$t>::from_le_bytes(c.try_into().unwrap())).collect()
        }
    };
}

impl Memory {
    pub fn new() -> Memory {
        Memory::default()
    }

    /// Adds a buffer with these contents; its base address is `self.base(id)`.
    pub fn add_buffer(&mut self, name: impl Into<String>, bytes: Vec<u8>) -> BufferId {
        self.buffers.push(Buffer { name: name.into(), region: Region::new(bytes) });
        BufferId(self.buffers.len() as u32 - 1)
    }

    /// Adds a buffer of `len_bytes` bytes of `pattern` (computed where read, kept where written).
    pub fn add_patterned(&mut self, name: impl Into<String>, len_bytes: u64, pattern: Pattern) -> BufferId {
        self.buffers.push(Buffer { name: name.into(), region: Region::patterned(len_bytes, pattern) });
        BufferId(self.buffers.len() as u32 - 1)
    }

    pub fn add_zeroed(&mut self, name: impl Into<String>, len_bytes: u64) -> BufferId {
        self.add_buffer(name, vec![0; len_bytes as usize])
    }

    typed!(add_f32, read_f32s, f32, 4);
    typed!(add_f64, read_f64s, f64, 8);
    typed!(add_i8, read_i8s, i8, 1);
    typed!(add_u8, read_u8s, u8, 1);
    typed!(add_i16, read_i16s, i16, 2);
    typed!(add_u16, read_u16s, u16, 2);
    typed!(add_i32, read_i32s, i32, 4);
    typed!(add_u32, read_u32s, u32, 4);
    typed!(add_i64, read_i64s, i64, 8);
    typed!(add_u64, read_u64s, u64, 8);

    /// Adds a buffer of IEEE half-precision values, rounded (nearest even) from `values`.
    pub fn add_f16(&mut self, name: impl Into<String>, values: &[f32]) -> BufferId {
        let bits: Vec<u16> = values.iter().map(|v| FloatVal::from_f32(*v).to_bits(FloatFormat::F16, Rounding::NearestEven) as u16).collect();
        self.add_u16(name, &bits)
    }

    /// The buffer's bytes read as IEEE half-precision values (exact in f32).
    pub fn read_f16s(&self, id: BufferId) -> Vec<f32> {
        self.read_u16s(id).into_iter().map(|b| FloatVal::from_bits(b as u64, FloatFormat::F16).to_f64() as f32).collect()
    }

    pub fn len(&self) -> usize {
        self.buffers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buffers.is_empty()
    }

    pub fn ids(&self) -> impl Iterator<Item = BufferId> {
        (0..self.buffers.len() as u32).map(BufferId)
    }

    pub fn find(&self, name: &str) -> Option<BufferId> {
        self.buffers.iter().position(|b| b.name == name).map(|i| BufferId(i as u32))
    }

    pub fn name(&self, id: BufferId) -> &str {
        &self.buffers[id.0 as usize].name
    }

    /// The base address a pointer argument to this buffer holds.
    pub fn base(id: BufferId) -> u64 {
        GLOBAL_BASE + id.0 as u64 * BUFFER_STRIDE
    }

    /// The buffer's bytes (a copy where a pattern's bytes are computed).
    pub fn bytes(&self, id: BufferId) -> std::borrow::Cow<'_, [u8]> {
        let r = &self.buffers[id.0 as usize].region;
        r.slice(0, r.len())
    }

    /// The bytes `byte_offset..byte_offset + len` of the buffer, if they are in it.
    pub fn read_bytes(&self, id: BufferId, byte_offset: u64, len: u64) -> Option<std::borrow::Cow<'_, [u8]>> {
        let r = &self.buffers[id.0 as usize].region;
        byte_offset.checked_add(len).is_some_and(|end| end <= r.len()).then(|| r.slice(byte_offset, len))
    }

    /// The buffer's length in bytes.
    pub fn buffer_len(&self, id: BufferId) -> u64 {
        self.buffers[id.0 as usize].region.len()
    }

    /// Mutable bytes (writing through them does not update exact floats: use for integer data).
    pub fn bytes_mut(&mut self, id: BufferId) -> &mut [u8] {
        let r = &mut self.buffers[id.0 as usize].region;
        r.exact.clear();
        r.hold(0, r.len());
        &mut r.data
    }

    /// Writes raw bytes at `byte_offset` (in bounds), dropping the exact floats they overlap.
    pub fn write_bytes(&mut self, id: BufferId, byte_offset: u64, bytes: &[u8]) {
        self.buffers[id.0 as usize].region.write_bytes(byte_offset, bytes);
    }

    /// The exact value of the float last stored at `byte_offset` (4-byte f32 stores first, then
    /// 8- and 2-byte ones), if the kernel stored a float there.
    pub fn read_exact(&self, id: BufferId, byte_offset: u64) -> Option<&BigRational> {
        let r = &self.buffers[id.0 as usize].region;
        [4, 8, 2].iter().find_map(|&w| r.exact(byte_offset, w)).and_then(|f| f.as_rational())
    }

    /// The float at `byte_offset` in format `fmt`: the exact stored value if there is one, else
    /// the value of the bytes.
    pub fn read_float(&self, id: BufferId, byte_offset: u64, fmt: FloatFormat) -> FloatVal {
        let r = &self.buffers[id.0 as usize].region;
        let w = fmt.width() / 8;
        if !r.contains(byte_offset, w) {
            return FloatVal::NaN;
        }
        match r.read(byte_offset, w) {
            Value::Float(f) => *f,
            Value::Bits(b) => FloatVal::from_bits(b, fmt),
        }
    }

    pub(crate) fn region(&mut self, buffer: usize) -> &mut Region {
        &mut self.buffers[buffer].region
    }

    pub(crate) fn buffer_name(&self, buffer: usize) -> &str {
        &self.buffers[buffer].name
    }

    pub(crate) fn locate(&self, addr: u64, bytes: u32) -> GlobalLoc {
        let n = self.buffers.len() as i128;
        let rel = addr as i128 - GLOBAL_BASE as i128;
        let stride = BUFFER_STRIDE as i128;
        // The buffer whose window holds the address.
        let i = rel.div_euclid(stride);
        if (0..n).contains(&i) {
            let offset = (rel - i * stride) as u64;
            if self.buffers[i as usize].region.contains(offset, bytes) {
                return GlobalLoc::In { buffer: i as usize, offset };
            }
        }
        // Out of bounds: name the buffer whose base is nearest, if the address is near one.
        let near = (rel + stride / 2).div_euclid(stride);
        let nearest = (0..n).contains(&near).then(|| {
            let near = near as usize;
            (near, self.buffers[near].region.len(), (rel - near as i128 * stride) as i64)
        });
        GlobalLoc::Outside { nearest }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(seed: u64) -> Pattern {
        let elements = std::array::from_fn(|v| {
            (v as u32 + 100).to_le_bytes().map(u64::from).map(|b| b as u8).iter().copied().chain([0; 4]).collect::<Vec<u8>>().try_into().unwrap()
        });
        Pattern { elements, elem_bytes: 4, values: PatternValues::Random(seed) }
    }

    /// A patterned buffer reads as the pattern where nothing was written and as the writes
    /// where something was (one across a page boundary, one raw), with every page read alike
    /// before and after its first write, and its bytes are the two together.
    #[test]
    fn a_patterned_buffer_reads_its_pattern_under_its_writes() {
        let len = 3 * PAGE + 10;
        let p = pattern(5);
        let mut mem = Memory::new();
        let id = mem.add_patterned("b", len, p.clone());
        let mut expected = p.bytes(len);
        let region = mem.region(0);
        let at = |expected: &[u8], off: u64| Value::Bits(u32::from_le_bytes(expected[off as usize..][..4].try_into().unwrap()) as u64);
        assert_eq!(region.read(PAGE + 8, 4), at(&expected, PAGE + 8));
        // A load copies its page (the third) in; what it reads, and the page, are the pattern's.
        assert_eq!(region.load(2 * PAGE + 6, 4), at(&expected, 2 * PAGE + 6));
        assert_eq!(region.read(2 * PAGE + 100, 4), at(&expected, 2 * PAGE + 100));
        region.write(PAGE - 2, 4, &Value::Bits(0xdead_beef));
        expected[(PAGE - 2) as usize..][..4].copy_from_slice(&0xdead_beefu32.to_le_bytes());
        mem.write_bytes(id, len - 3, &[1, 2, 3]);
        expected[(len - 3) as usize..].copy_from_slice(&[1, 2, 3]);
        assert_eq!(mem.bytes(id).as_ref(), expected.as_slice());
        for off in [0, PAGE - 4, PAGE - 2, PAGE + 8, 2 * PAGE + 1, len - 4] {
            let want = u32::from_le_bytes(expected[off as usize..][..4].try_into().unwrap()) as u64;
            assert_eq!(mem.region(0).read(off, 4), Value::Bits(want), "at {off}");
        }
        assert_eq!(mem.bytes_mut(id), expected.as_mut_slice());
    }
}
