"""The numerics the model families share: the stored rows (:mod:`.store`,
:mod:`.sparse_rows`, :mod:`.item_store`), a phase's block design and the plan its passes run
over (:mod:`.blocks`), sums in a fixed order (:mod:`.reduce`), the batched L-BFGS
(:mod:`.lbfgs`) and its preconditioner (:mod:`.preconditioner`), what a held-out prediction
says (:mod:`.margins`) and the one report of how a phase's fits ended (:mod:`.report`)."""
