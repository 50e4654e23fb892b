# %% [markdown] en="6a54c0ff"
# # 张量与自动微分
#
# **约 25 分钟**。学完本章，你将能够：
#
# * 从 NumPy 数组或随机数生成你想要的形状和数据类型的张量；
# * 对张量做归约、变形和乘法，并读懂形状出错时的报错信息；
# * 说出 `backward()` 把梯度放在哪里、梯度何时累加，以及 `no_grad` 和 `detach()` 改变了什么。
#
# 网络的每个参数都是一个张量（tensor）：一个数组，同时还记得后面的结果是怎样由它算出来的，这样 `backward()` 才能把梯度（gradient）交给它。在管理参数之前，你需要先熟悉张量本身。下面每一节回答一个学习者反复问到的问题，从“怎样给灰度图像加上通道维？”到“在网络中间阻断梯度，会对它之前的所有部分产生什么影响？”。
#
# 标为**深入一步**的小节打开时是折叠的：后面的内容都不依赖它们。

# %% [markdown] en="7f44996a"
# ## 从 NumPy 数组创建张量和随机张量
#
# `dt.tensor(data, dtype=None)` 把 `data` 复制到一个新张量里。它的数据类型遵循两条规则（与 PyTorch 相同）：
#
# * NumPy 数组**保留自己的数据类型**：NumPy 默认的浮点类型是 `float64`，所以浮点数组会变成 `float64` 张量；
# * Python 数字以及由它们组成的列表会变成 `float32`（整数则是 `int64`），这正是网络使用的类型。
#
# 想指定类型时，传入 `dtype=`。网络的输入请在创建张量时就一次性转换成 `float32`：层的参数是 `float32`，而一个 `float64` 的输入会让整个计算都变成 `float64`，既更慢，内存也翻倍。

# %% [markdown] en="f7041fd3"
# `dt.tensor` 会**复制**数据：之后修改 NumPy 数组不会改变张量。（`t.numpy()` 则是反方向的：在 CPU 上它与张量共享内存。）

# %% [markdown] en="fafc1c3a"
# 随机张量都来自同一个生成器，`dt.manual_seed(seed)` 会重置它。同一个种子给出同样的数，这正是笔记本（以及你的实验）能够重复的原因：
#
# * `dt.rand(*shape)`：[0, 1) 上的均匀分布；
# * `dt.randn(*shape)`：均值为 0、标准差为 1 的正态分布；
# * `dt.randint(low, high, shape)`：[low, high) 中的整数，例如用作假的类别标签。

# %% [markdown] en="5ac38316"
# 形状可以用 PyTorch 接受的各种方式给出：`dt.zeros(2, 3)`、`dt.zeros((2, 3))` 和 `dt.zeros(size=(2, 3))` 是一样的。`dt.normal(mean, std, size)` 按你指定的均值和标准差抽取正态分布的数，D2L 的线性回归就从这一行开始：

# %% [markdown] en="43d16829"
# ### 深入一步：float32 的层遇到 float64 的输入
#
# dltutor 会默默地把层的输出提升为 `float64`；PyTorch 2.13 则拒绝在一个层里混用两者（`RuntimeError: mat1 and mat2 must have the same dtype`；`tests/frameworks/test_ch00_welcome.py` 实际运行了这一点）。

# %% [markdown] en="b5ec3b49"
# ### 深入一步：10 万个样本下的 rand 与 randn
#
# 样本一多，两种分布就很容易区分。

# %% [markdown] en="1ea0b005"
# ## 沿某一维归约：`dim=` 以及 `max` 返回什么
#
# 归约运算（`sum`、`mean`、`max`、`std`、`softmax` 等）用 `dim=`（PyTorch 的叫法）或 `axis=`（NumPy 的叫法）指定维度；`keepdim=True` 会把这一维保留为大小 1。和 PyTorch 一样，**`max(x, dim)` 返回两个张量**：最大值和它们的位置。分类中的惯用写法正是靠这一点：每一行的预测类别是它最大得分的下标。（如果像 NumPy 那样只返回一个张量，对一个包含两行的批量写 `_, predicted = ...` 就会悄悄地把两行拆开。）

# %% [markdown] en="5a284f8b"
# ### 深入一步：最大值并列时，max 把梯度送到哪里
#
# 与 PyTorch 一致：`values` 把梯度送给每个下标选中的那一个元素，而 `x.max()` 和 `x.amax(dim)` 则把梯度平均分给并列的最大值。

# %% [markdown] en="12a4bdf8"
# ## 给图像增加通道维
#
# 一批灰度图像，例如 MNIST 数字，常常以形状 (N, 28, 28) 到来。卷积需要的是 (N, C, H, W)：必须告诉它只有**一个通道**。有三种方法可以得到相同的结果：
#
# * `x.unsqueeze(1)` 在位置 1 插入一个大小为 1 的轴；
# * `x.reshape(N, 1, 28, 28)` 直接写出新形状；
# * `x[:, None]` 是 NumPy 中做同一件事的索引写法。
#
# 没有任何值被移动：大小为 1 的轴只改变同一组数的索引方式，现在这些图像可以送进一个输入通道数为 1 的卷积了。（在数据进入 dltutor 之前，NumPy 的 `np.expand_dims(array, 1)` 也能做同样的事。）

# %% [markdown] en="15637c3f"
# **`expand` 是做另一件事的**：不复制数据，把大小为 1 的轴重复多次，例如把灰度图像送进一个为 3 通道彩色图像设计的网络（`x1.expand(-1, 3, -1, -1)`：-1 表示保持该维的大小）。关于它有两点：
#
# * 它只能重复大小为 1 的轴：把大小为 2 的轴扩展成 3 会报错（真正复制数据请用 `cat` 或 `stack`）；
# * 在反向传播（backpropagation）中，各个重复副本的梯度会**加到**唯一的原始张量上，所以梯度的形状与原始张量相同。这里每个像素被用了三次，所以它的梯度是 3。

# %% [markdown] en="95f62899"
# ### 深入一步：expand 得到的是视图，不是副本
#
# 结果是一个视图，被重复的那一维步长（stride）为 0：三个通道是同一块内存。

# %% [markdown] en="8c82923e"
# ## 批量矩阵乘法与先展平再相乘
#
# `a @ b`（或 `dt.matmul(a, b)`）把**最后两个轴**当作矩阵相乘。它们之前的每个轴都是批量轴，批量轴像 NumPy 那样广播。对于三维的 `a` 和一个矩阵 `b`，`a` 中的 2 个矩阵各自与 `b` 相乘：

# %% [markdown] en="e782d625"
# **先展平，再相乘**。Paddle 1.x 的 `fluid.layers.mul(x, y, x_num_col_dims=1, y_num_col_dims=1)` 先把**两个输入都展平成二维**（`x` 的前 `x_num_col_dims` 个轴成为行，其余的轴成为列；`y` 同样处理），然后做一次矩阵乘法，结果取 `x` 的行轴和 `y` 的列轴。使用 `x_num_col_dims=2` 时，它与 `a @ b` 一致：批量轴不过是更多的行。使用默认的 1 时，每个样本的 3 × 4 个数变成一行 12 个数，所以一个 (12, 5) 的矩阵 `W` 会一次性对两个尾部轴求和，而 `a @ W` 会失败（对 `b` 失败的则是默认的 `mul`）。下面只用 reshape 和 `@` 就能写出它，梯度也因此可以穿过它：

# %% [markdown] en="5b8d4f1f"
# ### 深入一步：两个操作数都带批量轴
#
# 这时 matmul 会把两者的批量轴配对，并广播大小为 1 的轴：这里 `a2` 包含 2 × 1 个矩阵，`b2` 包含 5 个，结果包含全部 2 × 5 个乘积。

# %% [markdown] en="5899a50a"
# ### 深入一步：今天的 Paddle 中的 mul 与 fc
#
# Paddle 中哪些地方仍这样展平，以及对上面 `mul` 结果的核对。

# %% [markdown] en="8c1e1d5b"
# 默认的 `mul(a, W)` 正是 Paddle 的全连接层 `fc` 处理图像特征的方式：1.x 如此，Paddle 3.3 的 `paddle.static.nn.fc` 也仍然如此。Paddle 3.3 也仍然能运行 `mul` 这个算子（`paddle._legacy_C_ops.mul`；`tests/frameworks/test_ch01_tensors.py` 用它核对了上面的结果）。与 `a2 @ b2` 不同，`mul` 不能把一批右侧矩阵配对。`Linear` 层处理三维输入时，也像 `x_num_col_dims=2` 的 `mul` 那样，把批量轴当作更多的行：

# %% [markdown] en="e75c568d"
# ## 读懂报错信息
#
# 形状错误是深度学习代码中最常见的 bug。dltutor 会在计算之前检查形状，并说明是哪个运算失败、涉及哪些形状、为什么失败。先读 traceback 的**最后一行**：这里它指出了 `matmul`、两个形状，以及本应相等的两个内部尺寸。（这个单元格本来就会失败。）

# %% [markdown] en="ebb50939"
# 报错的意思是：`matmul` 的两个内部尺寸 4 和 12 不相等。解决办法是先展平，写成 `features.reshape(16, 12) @ weights`，或者换用一个 (4, 5) 的矩阵。

# %% [markdown] en="0ea29db8"
# ### 深入一步：张量可以存放什么
#
# dltutor 的张量存放实数：布尔值、整数或浮点数。PyTorch 还有复数张量；dltutor 没有，所以它会拒绝复数数据，而不是悄悄丢掉虚部（它也像 PyTorch 一样拒绝字符串和 Python 对象）：

# %% [markdown] en="184f41de"
# ## 梯度会累加直到你清除它
#
# `loss.backward()` 对每个 `requires_grad=True` 的叶子张量 `t` 计算 d loss / d t，并把它**加到** `t.grad` 上。在任何反向传播之前，`t.grad` 是 `None`。

# %% [markdown] en="8781aaf5"
# 第二次反向传播不会替换梯度，而是累加上去。这是有意为之（它让你可以先在几个小批量上累加梯度，再做一次更新），也正因如此，训练循环在每一步都要清除梯度。反向传播会释放它走过的计算图（computational graph）以节省内存：要把同一个计算图走两遍，第一次调用时请传入 `retain_graph=True`。

# %% [markdown] en="864d5871"
# 清除梯度就是把它设为 `None`（`w.grad = None`、`module.zero_grad()` 或 `optimizer.zero_grad()`）。`None` 和零不是一回事：`None` 表示“没有梯度到达这个张量”，优化器会完全跳过这样的参数，这一点对冻结（freezing，第 8 章）很重要。

# %% [markdown] en="02fc762e"
# ### 深入一步：选择哪些张量得到梯度
#
# `backward(inputs=...)`、MegEngine 建立在它之上的训练循环，以及 Paddle 相反的默认值。

# %% [markdown] en="e7a5383e"
# `loss.backward(inputs=[a])`（PyTorch 的关键字参数）只写入所列叶子张量的 `.grad`，其余 `.grad` 保持原样。MegEngine 的训练循环就建立在这个想法上：它的张量没有 `requires_grad`。由一个 `GradManager` 指定哪些张量得到梯度（`attach`），并在 `with gm:` 中记录计算；`gm.backward(loss)` 把每个已附加张量的梯度加到它的 `.grad` 上，并结束记录。`dltutor.autodiff` 提供了这个 `GradManager`，所以 MegEngine 的循环可以照原样运行，底层用的是 `backward(inputs=...)`。
#
# Paddle 则反过来，用 `stop_gradient` 标出哪些张量不要梯度，而且普通张量的默认值与 PyTorch 相反：`paddle.to_tensor([1.0, 2.0])` 的 `stop_gradient=True`（它得不到梯度），除非你传入 `stop_gradient=False`；而层的可训练参数一开始就是 `stop_gradient=False`。下面是 MegEngine 的循环，用 dltutor 的 `GradManager` 运行：

# %% [markdown] en="e0ebec3c"
# ## 计算但不记录
#
# 在 `with dt.no_grad():` 中什么都不会被记录：结果的 `requires_grad=False`，也没有 `grad_fn`，所以内存中不会保留计算图。评估模型和手动修改参数时请使用它：只有在这里才允许写入需要梯度的张量（`w[...] = ...`），因为在它之外，引擎可能还需要旧的值来做反向传播。

# %% [markdown] en="4c609af6"
# ## 广播得到的梯度具有张量自己的形状
#
# 当一个张量被广播时，例如形状为 (3,) 的偏置加到形状为 (4, 3) 的批量上，它的每个数在每一行都被用一次。它的梯度汇总了所有这些使用，所以形状是**偏置自己的形状** (3,)，而不是批量的形状：这里每个元素被 4 行使用，得到 4。

# %% [markdown] en="3779092e"
# ## 在中间输出处阻断梯度
#
# 网络常常分阶段构建：stage1 -> stage2 -> stage3。假设 stage1 和 stage2 已经预训练好，你只想训练 stage3。Paddle 的 FAQ 的回答是：在 stage2 的输出上设置 `stop_gradient=True`。在 dltutor（以及 PyTorch）中，你对它调用 **`.detach()`**。
#
# `h.detach()` 返回一个与 `h` 数值相同（共享内存）的张量，但**没有任何它是怎样产生的记录**。反向传播从损失出发沿着这些记录走向叶子，所以会在这里停下：阻断点上游的一切，即 stage2、stage1 以及它们之前的任何东西，都得不到梯度。

# %% [markdown] en="cf3f927f"
# `detach()` **没有**做的事：它没有冻结 stage1 和 stage2。它们的参数仍然是 `requires_grad=True`，被 detach 的张量也仍保存着原来的值。只有这一条路径被阻断了，所以另一条不经过阻断点就能到达 stage1 的路径，例如在 stage1 的输出上加一个额外的损失，仍然会训练 stage1。

# %% [markdown] en="1c222fdf"
# 与**只冻结 stage2**（`stage2.requires_grad_(False)`）比较一下：stage2 得不到梯度，但梯度仍会穿过 stage2 的运算流到它的输入，所以 stage1 仍在训练。在 stage2 的输出处阻断路径会固定两个阶段；冻结一层只固定那一层。第 8 章会详细比较各种冻结方法。

# %% [markdown] en="986c4f69"
# 图示：每个参数、每种设置各一根柱子，表示梯度的范数；叉号表示梯度为 `None`。

# %% [markdown] en="9a354aea"
# ### 深入一步：有阻断时的一步训练
#
# 优化器会跳过梯度为 `None` 的参数：在有阻断的情况下走一步之后，stage1 和 stage2 保持不变，stage3 则移动了。

# %% [markdown] en="fa4a8e7d"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 从 NumPy 创建张量 | `dt.tensor(arr, dtype=dt.float32)` | `torch.tensor(arr, dtype=torch.float32)` | `paddle.to_tensor(arr, dtype="float32")`（1.x：`fluid.dygraph.to_variable`） | `mge.tensor(arr, dtype="float32")` |
# | 均匀分布 / 正态分布 / 整数 | `dt.rand`、`dt.randn`、`dt.normal`、`dt.randint` | `torch.rand`、`torch.randn`、`torch.normal`、`torch.randint` | `paddle.rand`、`paddle.randn`、`paddle.normal`、`paddle.randint` | `mge.random.uniform`、`mge.random.normal`、— |
# | 最大值及其位置 | `values, indices = x.max(dim=1)` | `x.max(dim=1)`（同样是一对） | `paddle.max(x, axis=1)`（只有值）、`paddle.argmax` | `F.max(x, axis=1)`（只有值）、`F.argmax` |
# | 随机种子 | `dt.manual_seed(0)` | `torch.manual_seed(0)` | `paddle.seed(0)` | `mge.random.seed(0)` |
# | 增加一个大小为 1 的轴 | `x.unsqueeze(1)` | `x.unsqueeze(1)` | `paddle.unsqueeze(x, 1)` | `F.expand_dims(x, 1)` |
# | 重复大小为 1 的轴 | `x.expand(-1, 3, -1, -1)` | `x.expand(-1, 3, -1, -1)` | `paddle.expand(x, [N, 3, 28, 28])` | `F.broadcast_to(x, (N, 3, 28, 28))` |
# | 批量矩阵乘法 | `a @ b`、`dt.matmul` | `a @ b`、`torch.matmul` | `paddle.matmul`（1.x：`fluid.layers.matmul`） | `F.matmul` |
# | 先展平，再做一次二维乘法 | `x.reshape(rows, -1) @ y` | —（先 reshape，再 `@`） | 1.x：`fluid.layers.mul(x, y, x_num_col_dims)` | — |
# | 在这里阻断梯度 | `h.detach()` | `h.detach()` | `h.stop_gradient = True` 或 `h.detach()` | `h.detach()` |
# | 不记录计算 | `with dt.no_grad():` | `with torch.no_grad():` | `with paddle.no_grad():` | 在 `GradManager.record()` 之外计算 |
# | 清除梯度 | `p.grad = None`、`zero_grad()` | `p.grad = None`、`zero_grad()` | `p.clear_gradient()`、`opt.clear_grad()` | `opt.clear_grad()` |
#
# ## 小结
#
# **两句话**：张量是一个记得自己如何被算出来的数组，所以 `backward()` 能把梯度交给每个需要梯度的叶子张量。这些梯度在你清除之前会不断累加，而 `no_grad` 和 `detach()` 决定记录在哪里停止。
#
# * `dt.tensor(array)` 会复制数据并保留 NumPy 数组的数据类型（float64 仍是 float64）；Python 浮点数给出 float32。网络的输入请传入 `dtype=dt.float32`。
# * `dt.rand`、`dt.randn`、`dt.normal`、`dt.randint` 从同一个生成器抽取；`dt.manual_seed` 让它们可以重复。
# * 归约运算接受 `dim=` 或 `axis=`；和 PyTorch 一样，`x.max(dim)` 返回 `(values, indices)`，`x.amax(dim)` 只返回值。
# * `unsqueeze(1)`、`reshape(N, 1, H, W)` 和 `x[:, None]` 都能增加通道维；`expand` 不复制数据地重复大小为 1 的轴，它的梯度会把各副本的梯度相加。
# * `a @ b` 把最后两个轴相乘并广播批量轴；先展平再相乘把一切变成一次二维乘法。只有当被展平的轴只是普通的行时，两者才一致。
# * 多次调用 `backward()` 时梯度会累加，直到被设为 `None`；广播张量的梯度具有它自己的形状；`no_grad` 中什么都不记录。
# * 对中间输出调用 `detach()` 会在那里阻断计算图：上游得不到梯度，但上游参数并没有被冻结，其他路径仍能到达它们。
#
# ## 练习
#
# 每道练习都有一个供你作答的单元格：把 `____` 换成你的答案，运行这个单元格，最后一行会检查它（正确；还不对，以及哪里不同；或尚未作答）。`ex.q1.hint()` 给出一条提示（再调用一次给出下一条），`ex.q1.solution()` 显示一种答案，`exercises.progress()` 列出每道练习的完成情况。

# %% [markdown] en="57085461"
# **1.** 创建一个张量 `t`，保存 `np.arange(6).reshape(2, 3)`，并且可以设置 `requires_grad=True`。它必须是什么数据类型？

# %% [markdown] en="e9161e39"
# **2.** `col = dt.ones(3, 1, requires_grad=True)` 被扩展成形状 (3, 4) 再求和：`col.expand(3, 4).sum().backward()`。先别运行，预测 `col.grad`，把它作为数组放进 `predicted_grad`；然后运行并比较。

# %% [markdown] en="2c0b11c7"
# **3.** 对 `a2`（形状为 (2, 1, 3, 4)；如果你跳过了生成它的“深入一步”部分，可以写 `a2 = dt.randn(2, 1, 3, 4)`）和一个 (12, 6) 的矩阵调用本章的 `mul`，并设置 `x_num_col_dims=2`。得到的形状是什么？把它（一个元组）放进 `mul_shape`。

# %% [markdown] en="384fdbdd"
# **4.** 在这个三阶段网络中，把 `detach()` 移到 stage1 的输出上（`stage2(stage1(x).relu().detach())`）。现在哪些参数会得到梯度？把它们的名字（`"stage2.weight"` 等）放进 `with_grad`；`grads()` 会显示它们。

# %% [markdown] en="ad9f7e6c"
# **5.** 先创建 `x = dt.tensor([1.0, 2.0, 3.0], requires_grad=True)` 和 `loss = (x ** 2).sum()`，再调用两次 `loss.backward()`。捕获第二次调用抛出的错误（`except Exception as err:`），把这个错误对象本身放进 `second_backward_error`。报错信息里写明了解决办法：`loss.backward(retain_graph=True)` 会保留计算图，供下一次反向传播使用。重新创建 `x` 和 `loss`，先调用 `loss.backward(retain_graph=True)`，再调用 `loss.backward()`，然后把 `x.grad` 放进 `grad_after_two`。动手之前先预测一下结果。

# %% [markdown] en="e45aab63"
# **6.** 写一个函数 `input_gradient(f, x)`：对一个把张量映射为一个数的函数 `f` 和一个 NumPy 数组 `x`，用自动微分（autograd）算出 `f` 在 `x` 处的梯度，以与 `x` 形状相同的数组返回。检查时会用它自己的函数和形状来试。
