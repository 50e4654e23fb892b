"""The kit's learner-facing text in English: key -> ``str.format`` template.

Keys start with the part of the kit that speaks: ``exercise.`` (the checker), ``lab.`` (the
training lab), ``diagnose.`` (summary, explain_lr, why_not_updating). ``zh.py`` has the same
keys with the same fields (a test checks it).
"""

TEXT = {
    # -- the exercise checker -----------------------------------------------------------------
    "exercise.correct": "Exercise {id}: correct.",
    "exercise.not_yet": "Exercise {id}: not yet. {why}",
    "exercise.not_attempted": ("Exercise {id}: not attempted yet. Set {names} (replace ____ with "
                               "your answer), run the cell, then check again."),
    "exercise.error": "Exercise {id}: not yet. Checking your answer raised {error}: {message}",
    "exercise.hint": "Hint {n} of {total} for exercise {id}: {text}",
    "exercise.no_more_hints": ("Exercise {id} has no more hints; {solution} shows an answer when "
                               "you want it."),
    "exercise.solution": "A solution to exercise {id}:\n{code}",
    "exercise.progress_header": "{done} of {total} exercises correct in this session.",
    "exercise.names_and": " and ",
    "exercise.status.correct": "correct",
    "exercise.status.not yet": "not yet",
    "exercise.status.not attempted": "not attempted",
    "exercise.status.not checked": "not checked",

    # -- the live lab (dltutor.lab) ------------------------------------------------------------
    "lab.play": "play",
    "lab.play.tip": "train continuously",
    "lab.pause": "pause",
    "lab.pause.tip": "stop after the current slice",
    "lab.step": "step",
    "lab.step.tip": "train one step",
    "lab.reset": "reset",
    "lab.reset.tip": "initial weights, fresh optimizer; the controls stay",
    "lab.layer": "layer {name}",
    "lab.layer_size": "{kind}, {size} params",
    "lab.freeze": "freeze",
    "lab.clip": "clip",
    "lab.clip_at": "at",
    "lab.speed": "speed",
    "lab.speed.tip": "training steps per second",
    "lab.max": "max",
    "lab.clip.off": "off",
    "lab.clip.value": "value",
    "lab.clip.norm": "norm (each tensor)",
    "lab.clip.global_norm": "global norm",
    "lab.legend.trace": "{by} {name}",
    "lab.legend.by.layer": "layer",
    "lab.legend.by.parameter": "parameter",
    "lab.legend.global": "all layers (global)",
    "lab.legend.clipped": "after clipping",
    "lab.legend.threshold": "clip threshold (gradient panel), 1e-3 (update panel)",
    "lab.legend.changed": "a control changed",
    "lab.legend.frozen": "shaded: steps the layer was frozen (its colour)",
    "lab.status.step": "step",
    "lab.status.loss": "loss",
    "lab.status.clip": "clip",
    "lab.status.clip_off": "off",
    "lab.status.clip_on": "{mode} at {threshold}, scale {scale}",
    "lab.status.running": "running",
    "lab.status.rate": "{rate} steps/s",
    "lab.status.paused": "paused",
    "lab.status.frozen": "frozen",
    "lab.status.error": "last error",
    "lab.panel.loss": "loss",
    "lab.panel.param": "parameter norm ‖w‖",
    "lab.panel.grad": "gradient norm ‖∇w‖ (dashed: clipped)",
    "lab.panel.ratio": "update / parameter ‖Δw‖ / ‖w‖",
    "lab.panel.boundary": "decision boundary",
    "lab.panel.threshold": "clip threshold {threshold}",
    "lab.grad_now": "‖∇w‖ now",
    "lab.panel.accuracy": "accuracy {accuracy}",
    "lab.app.demo": "demo",
    "lab.app.try": "Try this:",
    "lab.demo.two moons": "two moons",
    "lab.demo.exploding gradients": "exploding gradients",
    "lab.demo.spirals": "spirals",
    "lab.demo.pretrained features": "pretrained features",
    "lab.demo.tied layer": "tied layer",
    "lab.demo.handwritten digits": "handwritten digits",
    "lab.try.two moons": ("Press play. Tick freeze on layer 2 and watch its norm go flat while "
                          "the other layers learn; set a layer's lr × to 0 or 10."),
    "lab.try.exploding gradients": ("Press play: the loss overflows within a few steps. Reset, "
                                    "set clip to global norm at 1 and play again: now it "
                                    "learns."),
    "lab.try.spirals": ("Three spiral arms, a narrow first layer. Set layer 0's lr × to 10 and "
                        "it untangles them much sooner; at 0 it stalls. Reset between tries."),
    "lab.try.pretrained features": ("Layers 0.0 and 0.2 read digits (see 'digits, pretrained "
                                    "head'); the new head learns odd vs even. Freeze both "
                                    "before play and the digit accuracy stays put; leave them "
                                    "free and it collapses."),
    "lab.try.tied layer": ("Layer 2 is used twice: freeze it and both uses stop; its gradient "
                           "is the sum of the two uses."),
    "lab.try.handwritten digits": ("Adam on 8x8 digits: set layer 0's lr × to 0 (a fixed "
                                   "feature extractor) and see how far the last layer gets "
                                   "alone."),
}
