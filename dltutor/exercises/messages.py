"""Every sentence the exercise checker prints, in one table (one place to reword or translate).

Each entry is a ``str.format`` template; the checker fills in the exercise's id, the names it
reads, the hint number. The verdicts are short and fixed, so that a notebook's stored output
(the "not attempted" of an untouched starter cell) stays the same on every machine.

>>> MESSAGES["correct"].format(id="01.1")
'Exercise 01.1: correct.'
"""

MESSAGES = {
    "correct": "Exercise {id}: correct.",
    "not_yet": "Exercise {id}: not yet. {why}",
    "not_attempted": ("Exercise {id}: not attempted yet. Set {names} (replace ____ with your "
                      "answer), run the cell, then check again."),
    "error": "Exercise {id}: not yet. Checking your answer raised {error}: {message}",
    "hint": "Hint {n} of {total} for exercise {id}: {text}",
    "no_more_hints": ("Exercise {id} has no more hints; {solution} shows an answer when you want "
                      "it."),
    "solution": "A solution to exercise {id}:\n{code}",
    "progress_header": "{done} of {total} exercises correct in this session.",
    "status_correct": "correct",
    "status_not_yet": "not yet",
    "status_not_attempted": "not attempted",
    "status_not_checked": "not checked",
}
