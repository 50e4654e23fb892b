# %% [markdown] en="fc0727c8"
# # 欢迎来到 dltutor
#
# **约 10 分钟**。学完本章，你将能够：
#
# * 记录对一个张量的运算，并用 `backward()` 求出它的梯度；
# * 写出一个完整的训练步：一个网络、一个优化器、一个损失、`backward()` 和 `step()`；
# * 只改一行设备代码，就让同一份代码在 CPU 或 GPU 上运行；
# * 读懂用 `assert` 证明一个说法的单元格，并找到回答某个问题的那一章。
#
# 本套件只教一件事，并力求教好：**神经网络的参数是怎样管理的**（参数管理，parameter management）——怎样访问参数、怎样初始化、怎样让几处绑定同一个参数、怎样在优化器里分组、怎样给它们各自的学习率（learning rate）、怎样冻结（freeze）它们以及裁剪它们的梯度。你看到的每一个数都由 `dltutor` 算出：这是一个只用 NumPy 写成的小型深度学习引擎，公式和默认值都与 PyTorch 一致，所以在这里学到的东西可以直接用到 PyTorch 上，也适用于飞桨（PaddlePaddle，下文称 Paddle）和天元（MegEngine，下文称 MegEngine）：每一章都会列出它们对同一概念的叫法。
#
# 你只需要 Python 和 NumPy，不需要任何深度学习框架。从上到下运行各个单元格（Shift+Enter），改一改，再运行一次。

# %% [markdown] en="631c976b"
# ## 这些笔记本怎么用
#
# * **会证明的单元格**。每当一章声称某件事（“绑定层的梯度会相加”），都会有一个单元格用 `assert`（断言）来检查它。如果你改了代码、而这个说法不再成立，那个单元格就会失败——这正是弄清原因最快的办法。
# * 每章末尾都有**练习**，附带提示。
# * **测试时循环会变短**。测试套件会重新运行每一个笔记本。它会设置环境变量 `DLTUTOR_QUICK=1`，让很长的训练循环只跑几步；`dt.quick_mode()` 告诉笔记本当前是哪种情况。笔记本里保存的输出就来自这种快速运行。

# %% [markdown] en="de430f87"
# ## 初见：一个记得自己如何产生的张量
#
# `Tensor`（张量）保存着一个数组。指定 `requires_grad=True` 之后，对它的每一次运算都会被记录下来，这样 `backward()` 就能算出某个结果相对于它的梯度。

# %% [markdown] en="93f6b7b1"
# ## 各章一览
#
# | 笔记本 | 回答什么问题 |
# | --- | --- |
# | 01 张量与自动微分（autograd） | 创建张量、形状、带广播的矩阵乘法、阻断梯度 |
# | 02 参数访问 | 找到一层的参数、嵌套块中的参数名、导出某一层 |
# | 03 初始化 | 默认与内置的初始化器、自定义初始化器、为什么尺度很重要 |
# | 04 设置参数值 | 原地放进自己的值、预训练词向量、延后初始化（lazy initialization）的层 |
# | 05 参数绑定 | 在多处使用同一层，它的梯度会怎样 |
# | 06 优化器 | 参数组（parameter group）、多个优化器、逐参数的学习率与权重衰减（weight decay） |
# | 07 学习率 | 训练中改变学习率、学习率调度器、步数的计算、自己写优化器 |
# | 08 冻结 | 让一层停止训练的三种方法及其区别；BatchNorm |
# | 09 梯度裁剪（gradient clipping）与数值问题 | 按值、按范数、按全局范数裁剪；追查 NaN |
# | 10 数据与检查点 | 后台准备小批量数据、保存并精确地恢复训练 |
# | 11 GPU | 同一份代码在 GPU 上用 CuPy 运行，显存不够时怎么办 |
# | 12 实时实验室 | 在网络训练时冻结、调整学习率倍数（learning-rate multiplier）、裁剪，并实时观察 |
#
# [常见问题](FAQ.md)把学习者的每个问题对应到回答它的那一节；[术语对照表](../GLOSSARY.md)列出中英文术语以及各框架中的写法。英文版用 `make lab`（或 `dltutor lab`）打开，文件在 `notebooks/` 中。

# %% [markdown] en="1b9b60bc"
# ## CPU 还是 GPU
#
# NumPy 在 CPU 上计算。如果有 NVIDIA GPU 并执行了 `pip install cupy-cuda12x`，调用 `dt.backend.use("gpu")` 之后，同一份代码就会通过 CuPy 在 GPU 上运行；第 11 章会演示怎么做。PyTorch 的设备那一行把 `torch` 换成 `dt` 就能照原样运行：`device = dt.device("cuda" if dt.cuda.is_available() else "cpu")`，然后 `model.to(device)`。

# %% [markdown] en="674ac7b1"
# ## 完整的一个训练步只要五行
#
# 一个网络、一个优化器、一个损失、`backward()`、`step()`：后面各章会把每一部分拆开来讲。

# %% [markdown] en="c059de02"
# 同样的五行代码，在一幅经典的图上跑得更久一些：一个小网络学着把两个“月牙”分开。每种颜色是网络在那个位置预测的类别；实时实验室（`lab.zh.ipynb`，第 12 章）让你看着这条边界逐渐形成，并在训练中操控它。
#
# 想在自己用 matplotlib 画的图上写中文标题或坐标轴标签时，要先指定一个含中文字形的字体，否则汉字会显示成方框：例如 `plt.rcParams["font.sans-serif"] = ["Noto Sans CJK SC"]`（Linux 上的 Noto 字体；Windows 上可以用 `"Microsoft YaHei"`），这个字体需要已经装在系统里。负号也显示成方框时，再加上 `plt.rcParams["axes.unicode_minus"] = False`。

# %% [markdown] en="05cf9c14"
# **`momentum=0.9` 添加了什么**。普通的梯度下降沿着这一步的梯度走。有了动量（momentum），优化器还保留一个滑动的方向 `buf`，即迄今为止各步梯度的加权和：越早的梯度权重越小，每早一步就多乘一次 0.9。优化器沿着 `buf` 走，所以能越过小的起伏，在平稳的斜坡上越走越快。用 NumPy 写出一个参数的更新：
#
# ```python
# buf = grad                       # 第一步
# buf = momentum * buf + grad      # 以后的每一步
# param -= lr * buf
# ```
#
# 因为 `buf` 记着过去，梯度变为零的参数还会继续移动一阵（第 8 章会讲这在什么时候要紧）。在 `w * w` 上走三步，先手算，再用 `optim.SGD` 算：

# %% [markdown] en="04e61179"
# ## dltutor 与 PyTorch 的不同之处
#
# 为 PyTorch 写的代码，把 `torch` 换成 `dt` 后大多可以在这里运行（`nn`、`optim`、`nn.functional`、`nn.init`、`nn.utils` 的名字都一样），并打印出相同的数。不一样的地方都是有意为之，表中列出的章节会把两边的做法都展示出来（PyTorch 一栏用 PyTorch 2.13 实测，见 `tests/frameworks/test_ch00_welcome.py`）：
#
# | | PyTorch | dltutor | 原因 | 章节 |
# | --- | --- | --- | --- | --- |
# | `p.data` | 一个张量（`p.data.normal_(0, 0.01)`） | NumPy/CuPy 数组本身 | 你总能看到原始的数；请用 `init.normal_(p, 0, 0.01)` | 03 |
# | 把 float64 输入喂给 float32 的层 | 拒绝 | 按 float64 计算 | 这是 NumPy 的规则；把数据转换一次即可 | 01 |
# | 复数 | 允许 | 拒绝 | 没有哪一章需要它，而且它会掩盖错误 | 01 |
# | 一个参数在优化器里出现两次 | 在同一个参数组里：给出警告，然后每步更新两次；在两个参数组里：`ValueError` | 拒绝，并指出是哪个参数 | 一个参数，一次更新 | 06 |
# | 状态字典里绑定参数的几个名字对应不同的值 | 最后一个生效 | 拒绝 | 否则会悄无声息地丢掉一个值 | 05 |
# | `load_state_dict` 遇到形状不合的键 | 先复制所有合适的键，再报错 | 整体拒绝：什么都不改变 | 加载了一半的模型看起来一切正常 | 02 |
# | 逐参数的学习率、不参与裁剪的参数、“为什么它不更新？” | 每种学习率建一个参数组；只裁剪你传入的参数；自己逐项排查 | 另有 `p.lr_mult`、`p.need_clip`、`dt.diagnose` | 借鉴 Paddle 的做法，而且本套件能解释自己的行为 | 06, 08, 09 |
# | `opt.step()` 时梯度中有 NaN 或 Inf | 照样更新 | 拒绝（可用 `nonfinite="skip"` 或 `"apply"` 另作选择） | 这个权重从此一直是 NaN 或无穷大，经过裁剪或下一次前向计算，NaN 会传到每一个权重 | 09 |
# | 裁剪阈值 <= 0 | 接受（按范数裁剪会把梯度翻转或清零；负的裁剪值会把每个元素都设成这个值） | 拒绝 | 这总是一个错误 | 09 |
# | Adam、AdamW、RMSprop 或 Adagrad 用 `eps=0` | 接受：梯度为零时得到 0/0 = NaN，写进这个权重 | 拒绝：`eps` 必须 > 0 | 一个会把权重变成 NaN 的设置 | 06 |
# | `torch.load` / `dt.load` | 可能会反序列化 pickle（`weights_only=False`） | 只加载权重（safetensors） | pickle 可以执行代码 | 10 |
# | `t.type()` | `'torch.FloatTensor'` | `'float32'` | 使用 NumPy 的数据类型 | — |
# | `print(t.shape, t.dtype)` | `torch.Size([2, 3]) torch.float32` | `(2, 3) float32` | 普通的元组和 NumPy 的数据类型（张量本身的打印与 PyTorch 相同） | — |
# | 打印一个 `Linear` 层对一批输入（二维）的输出 | `grad_fn=<AddmmBackward0>` | `grad_fn=<LinearBackward>` | 显示你调用的函数，PyTorch 则显示它的内核名（逐元素运算两边一样）；不打印每次运行都会变的内存地址 | — |
#
# 其中两条在这里就能证明（其余的在各自的章节中证明）：

# %% [markdown] en="935c65ab"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 带梯度的数组 | `dt.tensor(..., requires_grad=True)` | `torch.tensor(..., requires_grad=True)` | `paddle.to_tensor(..., stop_gradient=False)` | `mge.tensor(...)` + `GradManager` |
# | 计算梯度 | `loss.backward()` | `loss.backward()` | `loss.backward()` | `gm.backward(loss)` |
# | 更新参数 | `opt.step()` | `opt.step()` | `opt.step()` | `opt.step()` |
# | 清除梯度 | `opt.zero_grad()`（也可以用 Paddle 的名字：`opt.clear_grad()`） | `opt.zero_grad()` | `opt.clear_grad()` | `opt.clear_grad()` |
#
# ## 练习
#
# 1. 把训练步中的学习率改成 `1.0`，再改成 `10.0`。损失会怎样？提示：打印每一步的损失，而不只是第一步和最后一步。
# 2. 手算 `(w ** 3).sum()` 的梯度，并与 `w.grad` 对照。提示：多次调用 `backward()` 时梯度会累加，所以先设置 `w.grad = None`。
#
# ## 小结
#
# **两句话**：这里的每个数都来自一个遵循通用公式的小型 NumPy 引擎，每个结论都由一个你可以修改、重新运行的单元格证明。一个训练步骤总是那几行代码，后面各章会把它们逐一拆开。
