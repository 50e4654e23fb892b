"""本套件面向学习者的中文文本：与 ``en.py`` 相同的键，相同的占位符。

``SENTENCES`` 把各章练习自带的句子（提示、"还不对"的原因）从英文对应到中文；没有译文的句子
仍以英文显示。
"""

TEXT = {
    # -- 练习检查器 ------------------------------------------------------------------------------
    "exercise.correct": "练习 {id}：正确。",
    "exercise.not_yet": "练习 {id}：还不对。{why}",
    "exercise.not_attempted": ("练习 {id}：还没有作答。请给 {names} 赋值（把 ____ 换成你的答案），"
                               "运行这个单元格，再检查一次。"),
    "exercise.error": "练习 {id}：还不对。检查你的答案时出现了 {error}：{message}",
    "exercise.hint": "练习 {id} 的提示 {n}/{total}：{text}",
    "exercise.no_more_hints": "练习 {id} 没有更多提示了；想看答案时，运行 {solution}。",
    "exercise.solution": "练习 {id} 的一种解法：\n{code}",
    "exercise.progress_header": "本次会话中，{total} 道练习里有 {done} 道正确。",
    "exercise.names_and": " 和 ",
    "exercise.status.correct": "正确",
    "exercise.status.not yet": "还不对",
    "exercise.status.not attempted": "未作答",
    "exercise.status.not checked": "未检查",
}

#: The exercises' own sentences: English -> Chinese.
SENTENCES: dict[str, str] = {}
