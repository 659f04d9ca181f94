import Lark.Exec

/-!
# Order independence of a phase

**Theorem** (`phase_order_independent`). If the threads of a phase do not conflict — no thread
writes (stores or atomically updates) a location another thread touches — then running them one
after another gives the same threads and the same memory whatever the order.

This is what lets proofs reason one thread at a time (ARCHITECTURE.md, "The execution model").
The proof has three layers:

1. *Memory algebra.* `applyLog m L` changes only the locations `L` writes, and what it leaves
   there does not depend on `m`; so the logs of two threads that write disjoint locations commute
   (`applyLog_comm`).
2. *Frame property.* A thread's run depends on memory only at the locations it touches: on a
   memory that agrees there, it does exactly the same (`runThread_frame`). This holds because
   `stepThread` decides each step without looking at memory and `runStep` reads only the locations
   it then records (`runStep_frame`).
3. *Permutations.* For any run function with the frame property, two adjacent non-conflicting
   threads can be swapped (`runPhaseWith_swap`), running the first thread keeps the others
   conflict-free (`conflictFree_tail`), and induction on `List.Perm` gives any reordering
   (`runPhaseWith_perm`).

Conflict-freedom is stated on each thread's log when it runs *first* on the phase's memory. Here
an atomic counts as a write: two atomics on one location do not race (`Lark.Props.RaceFree`), but
their results still depend on their order.
-/

namespace Lark

/-! ## Footprints of logs -/

/-- A location touched by the first part of a log is touched by the whole log. -/
theorem touches_append_left {xs ys : List Access} {l : Loc} (h : Touches xs l) :
    Touches (xs ++ ys) l := by
  induction h with
  | head ha => rw [List.cons_append]; exact Touches.head ha
  | tail _ ih => rw [List.cons_append]; exact Touches.tail ih

/-- A location touched by the second part of a log is touched by the whole log. -/
theorem touches_append_right (xs : List Access) {ys : List Access} {l : Loc} (h : Touches ys l) :
    Touches (xs ++ ys) l := by
  induction xs with
  | nil => rw [List.nil_append]; exact h
  | cons a rest ih => rw [List.cons_append]; exact Touches.tail ih

/-- A written location is a touched location. -/
theorem touches_of_writes {L : List Access} {l : Loc} (h : WritesTo L l) : Touches L l := by
  induction h with
  | head _ hl => exact Touches.head hl
  | tail _ ih => exact Touches.tail ih

/-! ## Memory algebra -/

/-- An access that does not write `l` leaves `l` alone. -/
theorem applyAccess_of_not_write {m : Mem} {a : Access} {l : Loc}
    (h : ¬ (a.isWrite = true ∧ a.loc = l)) : applyAccess m a l = m l := by
  cases a with
  | read l' b => rfl
  | write l' b v =>
    have hne : ¬ (l = l') := fun heq => h ⟨rfl, heq.symm⟩
    show update m l' v l = m l
    rw [update_apply, if_neg hne]
  | atomic l' b v =>
    have hne : ¬ (l = l') := fun heq => h ⟨rfl, heq.symm⟩
    show update m l' v l = m l
    rw [update_apply, if_neg hne]

/-- What an access writes at `l` does not depend on the memory it starts from. -/
theorem applyAccess_of_write {m m' : Mem} {a : Access} {l : Loc}
    (h : a.isWrite = true ∧ a.loc = l) : applyAccess m a l = applyAccess m' a l := by
  cases a with
  | read l' b =>
    have hf : (Access.read l' b).isWrite = false := rfl
    rw [hf] at h
    exact absurd h.1 (by decide)
  | write l' b v =>
    have heq : l = l' := h.2.symm
    show update m l' v l = update m' l' v l
    rw [update_apply, update_apply, if_pos heq, if_pos heq]
  | atomic l' b v =>
    have heq : l = l' := h.2.symm
    show update m l' v l = update m' l' v l
    rw [update_apply, update_apply, if_pos heq, if_pos heq]

/-- A log that does not write `l` leaves `l` alone. -/
theorem applyLog_of_not_writes :
    ∀ (L : List Access) (m : Mem) (l : Loc), ¬ WritesTo L l → applyLog m L l = m l
  | [], _, _, _ => rfl
  | a :: rest, m, l, h => by
    rw [applyLog_cons, applyLog_of_not_writes rest (applyAccess m a) l (fun h' => h (WritesTo.tail h'))]
    exact applyAccess_of_not_write (fun ha => h (WritesTo.head ha.1 ha.2))

/-- What a log leaves at a location it writes does not depend on the starting memory. -/
theorem applyLog_of_writes :
    ∀ (L : List Access) (m m' : Mem) (l : Loc), WritesTo L l → applyLog m L l = applyLog m' L l
  | [], _, _, _, h => nomatch h
  | a :: rest, m, m', l, h => by
    rw [applyLog_cons, applyLog_cons]
    by_cases hr : WritesTo rest l
    · exact applyLog_of_writes rest (applyAccess m a) (applyAccess m' a) l hr
    · rw [applyLog_of_not_writes rest (applyAccess m a) l hr,
        applyLog_of_not_writes rest (applyAccess m' a) l hr]
      cases h with
      | head hw hl => exact applyAccess_of_write ⟨hw, hl⟩
      | tail h' => exact absurd h' hr

/-- Logs that write disjoint locations commute. -/
theorem applyLog_comm (m : Mem) (L₁ L₂ : List Access)
    (h : ∀ l, WritesTo L₁ l → ¬ WritesTo L₂ l) :
    applyLog (applyLog m L₁) L₂ = applyLog (applyLog m L₂) L₁ := by
  funext l
  by_cases h₂ : WritesTo L₂ l
  · have h₁ : ¬ WritesTo L₁ l := fun h₁ => h l h₁ h₂
    rw [applyLog_of_writes L₂ (applyLog m L₁) m l h₂,
      applyLog_of_not_writes L₁ (applyLog m L₂) l h₁]
  · rw [applyLog_of_not_writes L₂ (applyLog m L₁) l h₂]
    by_cases h₁ : WritesTo L₁ l
    · rw [applyLog_of_writes L₁ m (applyLog m L₂) l h₁]
    · rw [applyLog_of_not_writes L₁ m l h₁, applyLog_of_not_writes L₁ (applyLog m L₂) l h₁,
        applyLog_of_not_writes L₂ m l h₂]

/-! ## Agreement of memories -/

/-- Agreement survives applying the same log to both memories. -/
theorem agreeOn_applyLog {S : List Access} {m m' : Mem} (L : List Access) (h : AgreeOn S m m') :
    AgreeOn S (applyLog m L) (applyLog m' L) := by
  intro l hl
  by_cases hw : WritesTo L l
  · exact applyLog_of_writes L m' m l hw
  · rw [applyLog_of_not_writes L m' l hw, applyLog_of_not_writes L m l hw]
    exact h l hl

/-- Agreement survives the same update of both memories. -/
theorem agreeOn_update {S : List Access} {m m' : Mem} (loc : Loc) (v : Value) (h : AgreeOn S m m') :
    AgreeOn S (update m loc v) (update m' loc v) := by
  intro l hl
  rw [update_apply, update_apply]
  by_cases heq : l = loc
  · rw [if_pos heq, if_pos heq]
  · rw [if_neg heq, if_neg heq]
    exact h l hl

/-- Agreement on a log implies agreement on its second part. -/
theorem agreeOn_append_right (xs : List Access) {ys : List Access} {m m' : Mem}
    (h : AgreeOn (xs ++ ys) m m') : AgreeOn ys m m' :=
  fun l hl => h l (touches_append_right xs hl)

/-- Agreement on a log implies agreement on its tail. -/
theorem agreeOn_cons {a : Access} {rest : List Access} {m m' : Mem}
    (h : AgreeOn (a :: rest) m m') : AgreeOn rest m m' :=
  fun l hl => h l (Touches.tail hl)

/-- Memories that agree on the locations of a list of loads give the same values. -/
theorem reads_agree : ∀ (reqs : List (Loc × Nat)) (rest : List Access) (m m' : Mem),
    AgreeOn (reqs.map (fun r => Access.read r.1 r.2) ++ rest) m m' →
    reqs.map (fun r => m' r.1) = reqs.map (fun r => m r.1)
  | [], _, _, _, _ => rfl
  | r :: rs, rest, m, m', h => by
    -- The log is `read r.1 _ :: (rs.map _ ++ rest)` once `map` and `++` are unfolded.
    have hcons : (r :: rs).map (fun r => Access.read r.1 r.2) ++ rest =
        Access.read r.1 r.2 :: (rs.map (fun r => Access.read r.1 r.2) ++ rest) := rfl
    have hr : m' r.1 = m r.1 := h r.1 (by rw [hcons]; exact Touches.head rfl)
    have hrs : AgreeOn (rs.map (fun r => Access.read r.1 r.2) ++ rest) m m' :=
      fun l hl => h l (by rw [hcons]; exact Touches.tail hl)
    show m' r.1 :: rs.map (fun r => m' r.1) = m r.1 :: rs.map (fun r => m r.1)
    rw [hr, reads_agree rs rest m m' hrs]

/-! ## The frame property -/

/-- A run function has the frame property when, on a memory that agrees with `m` wherever its run
on `m` looks, it does exactly what it did on `m`. -/
def Frame (run : ThreadState → Mem → ThreadState × List Access) : Prop :=
  ∀ t m m', AgreeOn (run t m).2 m m' → run t m' = run t m

/-- One step followed by a run with the frame property has the frame property. -/
theorem runStep_frame (run : ThreadState → Mem → ThreadState × List Access) (hrun : Frame run)
    (s : Step) (m m' : Mem) (h : AgreeOn (runStep run s m).2 m m') :
    runStep run s m' = runStep run s m := by
  cases s with
  | next t => exact hrun t m m' h
  | load reqs k =>
    have h' : AgreeOn (reqs.map (fun r => Access.read r.1 r.2) ++
        (run (k (reqs.map (fun r => m r.1))) m).2) m m' := h
    have hvals : reqs.map (fun r => m' r.1) = reqs.map (fun r => m r.1) := reads_agree reqs _ m m' h'
    have hrest : AgreeOn (run (k (reqs.map (fun r => m r.1))) m).2 m m' :=
      agreeOn_append_right _ h'
    show ((run (k (reqs.map (fun r => m' r.1))) m').1,
        reqs.map (fun r => Access.read r.1 r.2) ++ (run (k (reqs.map (fun r => m' r.1))) m').2) =
      ((run (k (reqs.map (fun r => m r.1))) m).1,
        reqs.map (fun r => Access.read r.1 r.2) ++ (run (k (reqs.map (fun r => m r.1))) m).2)
    rw [hvals, hrun _ m m' hrest]
  | store ws t =>
    have h' : AgreeOn (writeLog ws ++ (run t (applyLog m (writeLog ws))).2) m m' := h
    have hrest : AgreeOn (run t (applyLog m (writeLog ws))).2
        (applyLog m (writeLog ws)) (applyLog m' (writeLog ws)) :=
      agreeOn_applyLog (writeLog ws) (agreeOn_append_right (writeLog ws) h')
    show ((run t (applyLog m' (writeLog ws))).1, writeLog ws ++ (run t (applyLog m' (writeLog ws))).2) =
      ((run t (applyLog m (writeLog ws))).1, writeLog ws ++ (run t (applyLog m (writeLog ws))).2)
    rw [hrun t (applyLog m (writeLog ws)) (applyLog m' (writeLog ws)) hrest]
  | atomic loc bytes k =>
    have h' : AgreeOn (Access.atomic loc bytes (k (m loc)).1 ::
        (run (k (m loc)).2 (update m loc (k (m loc)).1)).2) m m' := h
    have hloc : m' loc = m loc := h' loc (Touches.head rfl)
    have hrest : AgreeOn (run (k (m loc)).2 (update m loc (k (m loc)).1)).2
        (update m loc (k (m loc)).1) (update m' loc (k (m loc)).1) :=
      agreeOn_update loc _ (agreeOn_cons h')
    show ((run (k (m' loc)).2 (update m' loc (k (m' loc)).1)).1,
        Access.atomic loc bytes (k (m' loc)).1 :: (run (k (m' loc)).2 (update m' loc (k (m' loc)).1)).2) =
      ((run (k (m loc)).2 (update m loc (k (m loc)).1)).1,
        Access.atomic loc bytes (k (m loc)).1 :: (run (k (m loc)).2 (update m loc (k (m loc)).1)).2)
    rw [hloc, hrun _ _ _ hrest]
  | stop t => rfl

/-- **Frame property of a thread.** A thread run on a memory that agrees with `m` wherever the run
on `m` looked does exactly the same: same final state, same accesses, same values written. -/
theorem runThread_frame (env : Env) (fuel : Nat) : Frame (runThread env fuel) := by
  induction fuel with
  | zero => intro t m m' _; rfl
  | succ n ih =>
    intro t m m' h
    exact runStep_frame (fun t' m' => runThread env n t' m') ih (stepThread env t) m m' h

/-! ## Swapping threads -/

/-- `setThread` read back. -/
theorem setThread_apply (ts : Nat → ThreadState) (i : Nat) (t : ThreadState) (j : Nat) :
    setThread ts i t j = if j = i then t else ts j := rfl

/-- Replacing thread `i` does not change thread `j ≠ i`. -/
theorem setThread_ne {ts : Nat → ThreadState} {i : Nat} {t : ThreadState} {j : Nat} (h : j ≠ i) :
    setThread ts i t j = ts j := by
  rw [setThread_apply, if_neg h]

/-- Replacing two different threads commutes. -/
theorem setThread_comm (ts : Nat → ThreadState) {i j : Nat} (a b : ThreadState) (h : i ≠ j) :
    setThread (setThread ts i a) j b = setThread (setThread ts j b) i a := by
  funext k
  simp only [setThread_apply]
  by_cases hkj : k = j
  · have hki : ¬ k = i := fun e => h (e.symm.trans hkj)
    simp only [if_pos hkj, if_neg hki]
  · by_cases hki : k = i
    · simp only [if_neg hkj, if_pos hki]
    · simp only [if_neg hkj, if_neg hki]

/-- One step of a phase, unfolded. -/
theorem runPhaseWith_cons (run : ThreadState → Mem → ThreadState × List Access) (i : Nat)
    (rest : List Nat) (ts : Nat → ThreadState) (m : Mem) :
    runPhaseWith run (i :: rest) ts m =
      runPhaseWith run rest (setThread ts i (run (ts i) m).1) (applyLog m (run (ts i) m).2) := rfl

/-- No location the first log writes is touched by the second. -/
def NoConflict (L₁ L₂ : List Access) : Prop := ∀ l, WritesTo L₁ l → ¬ Touches L₂ l

/-- Running thread `i` first does not change what thread `j` does when their accesses do not
conflict. -/
theorem run_after (run : ThreadState → Mem → ThreadState × List Access) (hf : Frame run)
    (ts : Nat → ThreadState) (m : Mem) {i j : Nat} (hji : j ≠ i)
    (hc : NoConflict (run (ts i) m).2 (run (ts j) m).2) :
    run (setThread ts i (run (ts i) m).1 j) (applyLog m (run (ts i) m).2) = run (ts j) m := by
  rw [setThread_ne hji]
  exact hf (ts j) m (applyLog m (run (ts i) m).2)
    (fun l hl => applyLog_of_not_writes _ m l (fun hw => hc l hw hl))

/-- Two adjacent threads whose accesses do not conflict (either way) can be swapped. -/
theorem runPhaseWith_swap (run : ThreadState → Mem → ThreadState × List Access) (hf : Frame run)
    (i j : Nat) (rest : List Nat) (ts : Nat → ThreadState) (m : Mem) (hij : i ≠ j)
    (hc₁ : NoConflict (run (ts i) m).2 (run (ts j) m).2)
    (hc₂ : NoConflict (run (ts j) m).2 (run (ts i) m).2) :
    runPhaseWith run (i :: j :: rest) ts m = runPhaseWith run (j :: i :: rest) ts m := by
  simp only [runPhaseWith_cons]
  rw [run_after run hf ts m (Ne.symm hij) hc₁, run_after run hf ts m hij hc₂]
  rw [setThread_comm ts (run (ts i) m).1 (run (ts j) m).1 hij,
    applyLog_comm m (run (ts i) m).2 (run (ts j) m).2
      (fun l hw₁ hw₂ => hc₁ l hw₁ (touches_of_writes hw₂))]

/-! ## Permutations -/

/-- The list has no repeated thread. -/
inductive Distinct : List Nat → Prop where
  | nil : Distinct []
  | cons {i : Nat} {is : List Nat} : ¬ i ∈ is → Distinct is → Distinct (i :: is)

/-- The threads of `order` do not conflict: no thread writes a location another touches, each
run first on memory `m`. -/
def ConflictFree (run : ThreadState → Mem → ThreadState × List Access) (order : List Nat)
    (ts : Nat → ThreadState) (m : Mem) : Prop :=
  ∀ i j, i ∈ order → j ∈ order → i ≠ j → NoConflict (run (ts i) m).2 (run (ts j) m).2

/-- Permutations preserve membership. -/
theorem perm_mem_iff {l₁ l₂ : List Nat} (h : l₁.Perm l₂) : ∀ a, a ∈ l₁ ↔ a ∈ l₂ := by
  induction h with
  | nil => intro a; exact Iff.rfl
  | cons x _ ih =>
    intro a
    constructor
    · intro ha
      cases ha with
      | head => exact List.Mem.head _
      | tail _ hm => exact List.Mem.tail _ ((ih a).mp hm)
    · intro ha
      cases ha with
      | head => exact List.Mem.head _
      | tail _ hm => exact List.Mem.tail _ ((ih a).mpr hm)
  | swap x y l =>
    intro a
    constructor
    · intro ha
      cases ha with
      | head => exact List.Mem.tail _ (List.Mem.head _)
      | tail _ hm =>
        cases hm with
        | head => exact List.Mem.head _
        | tail _ hm' => exact List.Mem.tail _ (List.Mem.tail _ hm')
    · intro ha
      cases ha with
      | head => exact List.Mem.tail _ (List.Mem.head _)
      | tail _ hm =>
        cases hm with
        | head => exact List.Mem.head _
        | tail _ hm' => exact List.Mem.tail _ (List.Mem.tail _ hm')
  | trans _ _ ih₁ ih₂ => intro a; exact (ih₁ a).trans (ih₂ a)

/-- Permutations preserve distinctness. -/
theorem distinct_of_perm {l₁ l₂ : List Nat} (h : l₁.Perm l₂) : Distinct l₁ → Distinct l₂ := by
  induction h with
  | nil => intro hd; exact hd
  | cons x hp ih =>
    intro hd
    cases hd with
    | cons hx hrest => exact Distinct.cons (fun hm => hx ((perm_mem_iff hp x).mpr hm)) (ih hrest)
  | swap x y l =>
    intro hd
    cases hd with
    | cons hy hrest =>
      cases hrest with
      | cons hx hl =>
        refine Distinct.cons ?_ (Distinct.cons (fun hm => hy (List.Mem.tail _ hm)) hl)
        intro hm
        cases hm with
        | head => exact hy (List.Mem.head _)
        | tail _ hm' => exact hx hm'
  | trans _ _ ih₁ ih₂ => intro hd; exact ih₂ (ih₁ hd)

/-- Conflict-freedom depends only on which threads run, not on their order. -/
theorem conflictFree_of_perm (run : ThreadState → Mem → ThreadState × List Access)
    {o o' : List Nat} (h : o.Perm o') {ts : Nat → ThreadState} {m : Mem}
    (hc : ConflictFree run o ts m) : ConflictFree run o' ts m :=
  fun i j hi hj hij => hc i j ((perm_mem_iff h i).mpr hi) ((perm_mem_iff h j).mpr hj) hij

/-- After the first thread of a conflict-free phase runs, the remaining threads are still
conflict-free: each does what it would have done first. -/
theorem conflictFree_tail (run : ThreadState → Mem → ThreadState × List Access) (hf : Frame run)
    (x : Nat) (l : List Nat) (ts : Nat → ThreadState) (m : Mem) (hx : ¬ x ∈ l)
    (hc : ConflictFree run (x :: l) ts m) :
    ConflictFree run l (setThread ts x (run (ts x) m).1) (applyLog m (run (ts x) m).2) := by
  intro i j hi hj hij
  have hix : i ≠ x := by
    intro e
    subst e
    exact hx hi
  have hjx : j ≠ x := by
    intro e
    subst e
    exact hx hj
  have ei := run_after run hf ts m hix
    (hc x i (List.Mem.head _) (List.Mem.tail _ hi) (Ne.symm hix))
  have ej := run_after run hf ts m hjx
    (hc x j (List.Mem.head _) (List.Mem.tail _ hj) (Ne.symm hjx))
  show NoConflict
    (run (setThread ts x (run (ts x) m).1 i) (applyLog m (run (ts x) m).2)).2
    (run (setThread ts x (run (ts x) m).1 j) (applyLog m (run (ts x) m).2)).2
  rw [ei, ej]
  exact hc i j (List.Mem.tail _ hi) (List.Mem.tail _ hj) hij

/-- Order independence for any run function with the frame property. -/
theorem runPhaseWith_perm (run : ThreadState → Mem → ThreadState × List Access) (hf : Frame run)
    {o o' : List Nat} (h : o.Perm o') :
    ∀ (ts : Nat → ThreadState) (m : Mem), Distinct o → ConflictFree run o ts m →
      runPhaseWith run o ts m = runPhaseWith run o' ts m := by
  induction h with
  | nil => intro ts m _ _; rfl
  | cons x _ ih =>
    intro ts m hd hc
    simp only [runPhaseWith_cons]
    cases hd with
    | cons hx hrest => exact ih _ _ hrest (conflictFree_tail run hf x _ ts m hx hc)
  | swap x y l =>
    intro ts m hd hc
    have hyx : y ≠ x := by
      intro e
      cases hd with
      | cons hy _ =>
        subst e
        exact hy (List.Mem.head _)
    exact runPhaseWith_swap run hf y x l ts m hyx
      (hc y x (List.Mem.head _) (List.Mem.tail _ (List.Mem.head _)) hyx)
      (hc x y (List.Mem.tail _ (List.Mem.head _)) (List.Mem.head _) (Ne.symm hyx))
  | trans h₁ _ ih₁ ih₂ =>
    intro ts m hd hc
    rw [ih₁ ts m hd hc]
    exact ih₂ ts m (distinct_of_perm h₁ hd) (conflictFree_of_perm run h₁ hc)

/-- **Order independence of a race-free phase.** When the threads of a phase do not conflict, the
threads and the memory after the phase do not depend on the order the threads ran in: any
permutation `o'` of the order `o` gives the same result. -/
theorem phase_order_independent (env : Env) (fuel : Nat) {o o' : List Nat} (h : o.Perm o')
    (ts : Nat → ThreadState) (m : Mem) (hd : Distinct o)
    (hc : ConflictFree (runThread env fuel) o ts m) :
    runPhase env fuel o ts m = runPhase env fuel o' ts m :=
  runPhaseWith_perm (runThread env fuel) (runThread_frame env fuel) h ts m hd hc

end Lark
