import Lark.Kernel

/-!
# Segments

A kernel's instructions, block after block in block-id order (`Kernel.flatInsts`), cut into
named, contiguous segments. LARK cuts at barriers and loop boundaries and names the steps it
recognises (a load to shared memory, a reduction loop, the final store); an agent may propose
other cuts, which LARK validates before use.

A segmentation is sound for a kernel when its segments are non-empty, in order, each starting
where the previous one stopped, from the first instruction to past the last (`covers`). The
emitted module proves that by `decide` for each kernel, and `concat_segmentInsts` turns it into
the statement a reader wants: the segments' instructions, concatenated, are the kernel's.
-/

namespace Lark

/-- A named range `[start, stop)` of `Kernel.flatInsts`. -/
structure Segment where
  name : String
  start : Nat
  stop : Nat
  deriving Repr

/-- The kernel's instructions (terminators aside), block after block in block-id order. -/
def Kernel.flatInsts (k : Kernel) : List Inst :=
  k.cfg.blocks.foldr (fun b acc => b.insts ++ acc) []

/-- The instructions of a segment within `l`. -/
def Segment.insts (s : Segment) (l : List Inst) : List Inst :=
  (l.drop s.start).take (s.stop - s.start)

/-- The segments are non-empty and contiguous, the first starting at `pos` and the last stopping
at `n`. -/
def covers : List Segment → Nat → Nat → Bool
  | [], pos, n => pos == n
  | s :: ss, pos, n => s.start == pos && decide (s.start < s.stop) && covers ss s.stop n

/-- The instructions of every segment, concatenated. -/
def segmentInsts (ss : List Segment) (l : List Inst) : List Inst :=
  ss.foldr (fun s acc => s.insts l ++ acc) []

/-- Covering segments concatenate to the instructions from `pos` on. -/
theorem concat_segmentInsts_from (l : List Inst) :
    ∀ (ss : List Segment) (pos : Nat), covers ss pos l.length = true →
      segmentInsts ss l = l.drop pos := by
  intro ss
  induction ss with
  | nil =>
    intro pos h
    have hpos : pos = l.length := by simpa [covers] using h
    subst hpos
    simp [segmentInsts]
  | cons s ss ih =>
    intro pos h
    simp only [covers, Bool.and_eq_true, beq_iff_eq, decide_eq_true_eq] at h
    obtain ⟨⟨hstart, hlt⟩, hrest⟩ := h
    have htail : segmentInsts ss l = l.drop s.stop := ih s.stop hrest
    have hsplit : (l.drop pos).take (s.stop - pos) ++ (l.drop pos).drop (s.stop - pos) = l.drop pos :=
      List.take_append_drop (s.stop - pos) (l.drop pos)
    have hdrop : (l.drop pos).drop (s.stop - pos) = l.drop s.stop := by
      rw [List.drop_drop]
      congr 1
      omega
    calc segmentInsts (s :: ss) l
        = s.insts l ++ segmentInsts ss l := rfl
      _ = (l.drop pos).take (s.stop - pos) ++ (l.drop pos).drop (s.stop - pos) := by
          rw [htail, hdrop, Segment.insts, hstart]
      _ = l.drop pos := hsplit

/-- A sound segmentation's instructions, concatenated, are the kernel's. -/
theorem concat_segmentInsts (k : Kernel) (ss : List Segment)
    (h : covers ss 0 k.flatInsts.length = true) : segmentInsts ss k.flatInsts = k.flatInsts := by
  simpa using concat_segmentInsts_from k.flatInsts ss 0 h

end Lark
