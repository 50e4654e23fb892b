# %% [markdown] en="d73aa9d7"
# # dltutor 实时实验室
#
# 选一个演示，按下**播放**，在网络训练的同时改变各个控件：冻结（freeze）某一层，给它单独的学习率倍数（learning-rate multiplier），即控件 **lr ×**，打开梯度裁剪（gradient clipping），用**速度**滑块让训练变慢或变快。图表会显示每次改动从那一步起带来的效果。第 12 章（`12_live_lab.zh.ipynb`）逐一解释每个控件，并证明图中所示的结论。
