import Lark.Value
import Lark.Ideal
import Lark.Ops.Int
import Lark.Ops.Float
import Lark.Ops.Memory
import Lark.Ops.Warp
import Lark.Ops.Control
import Lark.Kernel
import Lark.Exec
import Lark.Props
import Lark.Tensor
import Lark.Reference
import Lark.Agree
import Lark.Segment
import Lark.Theorems.PhaseOrder

/-!
# LARK

The formal model of LARK: kernels lifted from PTX (`Lark.Kernel`), their execution
(`Lark.Exec`), the properties the engine checks (`Lark.Props`), the tensor semantics of
references (`Lark.Tensor`; at one shape, as scalar graphs, `Lark.Reference`), buffers bound to
reference tensors (`Lark.Agree`), segmentations (`Lark.Segment`), and the theorem that lets proofs
run a race-free phase one thread at a time (`Lark.Theorems.PhaseOrder`). Core Lean 4 only; see
`lean/README.md`.
-/
