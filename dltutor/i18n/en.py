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
}
