"""What the kit says about training on several processes, in English: the replica check
(``dltutor.distributed.check_replicas``) and the diagnostics of a model trained data-parallel
(``dltutor.diagnose``'s rows and lines about DistributedDataParallel). ``zh_distributed.py``
has the same keys.
"""
TEXT = {
    "diagnose.col.in_reducer": "in_reducer",
    "diagnose.why.moves_apart": "updates, but differently in each process: {detail}",
    "diagnose.why.cause.outside_reducer": ("it is outside DistributedDataParallel's reducer "
                                           "(requires_grad was False when the model was "
                                           "wrapped), so its gradient is never averaged"),
    "diagnose.why.cause.differs_across_replicas": "its values differ across the processes",
    "diagnose.why.cause.unreached_skipped": ("the last forward did not reach it, so "
                                             "DistributedDataParallel skipped it "
                                             "(find_unused_parameters=True)"),
    "diagnose.why.cause.unreached_stops": ("the last backward did not reach it, so "
                                           "DistributedDataParallel averaged no gradient and "
                                           "the next forward stops with an error"),
    "diagnose.why.check.in_reducer": "in DDP's reducer?",
    "diagnose.why.check.ddp_reached": "reached by the last iteration?",
    "diagnose.why.check.replicas": "the same in every process?",
    "diagnose.ddp.reduced": "yes: backward averages its gradient over {world} process(es)",
    "diagnose.ddp.outside": ("no: requires_grad was False when the model was wrapped; each "
                             "process now trains it on its own gradient, never averaged, so the "
                             "replicas drift apart (wrap the model again after unfreezing)"),
    "diagnose.ddp.outside_frozen": "no: frozen (no gradient to average)",
    "diagnose.ddp.reached": "yes: not missed by the last iteration",
    "diagnose.ddp.skipped": ("no: the last forward did not reach it; find_unused_parameters=True "
                             "skipped it (no gradient, no update this step)"),
    "diagnose.ddp.stops": ("no: the last backward did not reach it, so no gradient was averaged "
                           "and the next forward stops; pass find_unused_parameters=True, or "
                           "freeze it before wrapping"),
    "diagnose.ddp.replicas_not_checked": ("not compared (check_replicas=True compares: a "
                                          "collective, so every process must make the call)"),
    "diagnose.ddp.replicas_equal": "yes: the same bytes in all {world} process(es)",
    "diagnose.ddp.replicas_differ": "no: {row}",
    "diagnose.ddp.summary_head": ("DistributedDataParallel over {world} process(es): {reduced} "
                                  "of {names} parameter names in the reducer (gradients "
                                  "averaged)"),
    "diagnose.ddp.summary_outside": ("outside the reducer although trainable (requires_grad was "
                                     "False when wrapped; gradients never averaged): {names}"),
    "diagnose.ddp.summary_skipped": ("not reached by the last forward, skipped "
                                     "(find_unused_parameters=True): {names}"),
    "diagnose.ddp.summary_stops": ("not reached by the last backward: the next forward stops "
                                   "(pass find_unused_parameters=True): {names}"),
    "diagnose.ddp.summary_not_compared": ("replicas not compared (summary(..., "
                                          "check_replicas=True) compares them: a collective, "
                                          "every process must call it)"),
    "distributed.replicas.equal": ("replicas: {count} tensors compared across {world} "
                                   "process(es): all equal"),
    "distributed.replicas.differ": ("replicas: {count} of {compared} tensors differ across "
                                    "{world} process(es) (compared with rank 0's):"),
    "distributed.replicas.row": "{name}: {differences}",
    "distributed.replicas.rank_diff": "rank {rank} (largest |difference| {diff})",
    "diagnose.why.cause.not_averaged": ("the last backward did not reach every parameter, so "
                                        "DistributedDataParallel did not average this gradient: "
                                        "each process steps on its own"),
    "diagnose.ddp.not_averaged": ("yes, but other parameters were not reached, so this step's "
                                  "gradients were not averaged (the next forward stops)"),
}
