# %% [markdown] en="974afe62"
# # 参数访问
#
# **约 30 分钟**。学完本章，你将能够：
#
# * 拿到某一层的参数，读出一个参数的值和梯度，并说出梯度为什么一开始是 `None`；
# * 列出每个参数的名字和形状，并按以点号连接的名字取出其中一个，在嵌套的块中也一样；
# * 把一层的权重导出到文件、加载到另一层中，并读懂一次被拒绝的加载；
# * 写一个自己创建参数的层，并把参数放进优化器仍然看得见的列表或字典中；
# * 把测量得到的状态放进缓冲区，让它随模型一起保存和移动，却永远不被训练。
#
# 训练为网络的参数找到好的值；之后就要用它们了：查看它们以便调试或可视化，保存其中一部分，或者加载到另一个模型中。为此你必须知道参数在哪里、叫什么名字。本章借一个小网络，依次回答这些关于参数访问（parameter access）的问题。
#
# D2L 中文版第 5 章“深度学习计算”中对应的一节是[参数管理](https://zh.d2l.ai/chapter_deep-learning-computation/parameters.html)，可以对照着读。

# %% [markdown] en="634fc89c"
# 本章的网络是一个带一个隐藏层的多层感知机：4 个输入、8 个隐藏单元、1 个输出，再加上一个包含 2 个样本的批量用来运行它。

# %% [markdown] en="73f7bf58"
# ## Sequential 中某一层的参数
#
# `Sequential` 可以像列表一样索引：`net[0]` 是第一个 `Linear`，`net[1]` 是 `ReLU`，`net[2]` 是输出层。一层的 `state_dict()`（状态字典，state dict）是一个从参数名到值的字典；对于 `Linear`，名字是 `weight` 和 `bias`。

# %% [markdown] en="9fa9b453"
# `Linear(8, 1)` 的权重形状是 (1, 8)，即 (out_features, in_features)，与 PyTorch 相同（Paddle 存的是转置，(in, out)）。偏置每个输出一个数。`ReLU` 没有要学习的东西，所以它的状态字典是空的。

# %% [markdown] en="269f9dd0"
# 状态字典中的值是普通张量（没有梯度），并且与参数**共享内存**：它们是当前值的一个视图，而不是快照。如果想保留此刻的值，请复制它们（`.numpy().copy()`）。

# %% [markdown] en="27291523"
# ## 参数对象是什么
#
# `net[2].bias` 是一个 `nn.Parameter`：一个被模块登记为可学习的张量。它保存一个值、反向传播（backpropagation）之后的梯度，以及几个后面章节会用到的设置（`lr_mult`、`regularizer`、`need_clip`）。

# %% [markdown] en="c1ae2c25"
# 要直接处理这些数，请明确地取出值：
#
# * `p.data` 是里面的数组（在 CPU 上是 NumPy 数组，在 GPU 上是 CuPy 数组）；
# * `p.numpy()` 总是给出 NumPy 数组；
# * 只有一个数时，`p.item()` 给出一个 Python 数。

# %% [markdown] en="6b5d0790"
# 除了值，参数还有梯度 `p.grad`。还没有运行过任何 `backward()`，所以梯度是 `None`。`None` 不是零：零表示“损失不随这个参数变化”，而 `None` 表示“还没有人问过”。

# %% [markdown] en="f3e1acb0"
# 一次反向传播之后，每个参数都有了梯度，它是一个与参数**形状完全相同**的张量：每个数对应一个偏导数。

# %% [markdown] en="67c983c8"
# ### 深入一步：手工验证梯度，再把它画出来
# 在纸上推出输出层的梯度，再把第一层的权重和梯度并排画出来。

# %% [markdown] en="a7277ff0"
# 这里的数很容易手工验证。输出是 `h @ W2.T + b2`，其中 `h` 是隐藏层的输出，损失把两个样本的输出加起来：所以 `b2` 的梯度是每个样本 1（共 2），`W2` 的梯度是 `h` 在批量上的和。

# %% [markdown] en="0f8fc021"
# 第一层的图示：它的权重（8 个隐藏单元 × 4 个输入）和它的梯度并排放在一起，是两个形状相同的数组。梯度为零的行，属于那些对两个样本都被 ReLU 关掉的隐藏单元。

# %% [markdown] en="96edb854"
# ## 所有参数及其名字和形状
#
# `named_parameters()` 遍历一个模块，产生 `(name, parameter)` 对。对整个网络，每个名字前面会加上它所在层的位置和一个点号；没有 `1.`，因为 ReLU 没有参数。

# %% [markdown] en="aa9412ae"
# 网络的状态字典使用同样的名字，所以 `net.state_dict()['2.bias']` 就是输出层的偏置。`net.get_parameter('2.bias')` 返回参数对象本身。

# %% [markdown] en="5556d4c7"
# `dt.diagnose.summary(net)` 把这些都放进一张表：每个名字及其形状、元素个数（number of elements）、数据类型、是否参与训练和它的设置，表下面是合计。如果再给出优化器，`summary(net, opt)` 还会列出每个参数所在的参数组（parameter group）和学习率（learning rate），第 6 章和第 8 章就是这样用的。

# %% [markdown] en="b0908ff2"
# ### 深入一步：在 PyTorch 中做同样的表
# 其他框架用什么代替 `summary`，以及只用几行、在 PyTorch 中也能运行的同一张表。

# %% [markdown] en="6257172c"
# `summary` 是 dltutor 自己的工具（PyTorch 没有这样的函数；Paddle 有 `paddle.summary`，按层列表，MegEngine 有 `megengine.utils.module_stats.module_stats`）。它显示的内容，用几行代码就能原样搬到 PyTorch（把 `dt` 换成 `torch`）：下面的循环只用到了 `named_parameters()`、`shape`、`numel()` 和 `requires_grad`。

# %% [markdown] en="2f4ea217"
# ## 嵌套块的参数
#
# 更大的网络由块构成，块又由更小的块构成。**块工厂**是一个每次调用都返回一个新块的函数。`block2` 把 `block1` 生成的四个块放进一个 `Sequential`，并用 `add_module` 给每个块命名；名字里可以有空格。打印出来的网络是一棵缩进的树：每一行开头是子模块在其父模块中的名字。

# %% [markdown] en="a66c6aa7"
# 参数的完整名字是从顶层开始的一串名字，用点号连接：`block 0` 中第一层的偏置是 `0.block 0.0.bias`。工厂造出的每个块都有自己的参数。

# %% [markdown] en="139810d1"
# 你可以像嵌套列表一样按位置沿着树往下走：`rgnet[0][1]` 是那个大块的**第二个**子模块，名字叫 `block 1`；`rgnet[0][1][0]` 是它的第一层，这一层的偏置在 `rgnet[0]` 的状态字典中叫 `'block 1.0.bias'`。注意区分位置和名字：`'block 0.0.bias'` 属于位置 0，是另一层。

# %% [markdown] en="07fcf231"
# ## 自定义层
#
# 自己的层是 `nn.Module` 的子类：在 `__init__` 中先调用 `super().__init__()`，再创建它的参数，在 `forward` 中计算输出。把一个 `nn.Parameter` 赋值给属性，就以这个属性名注册了它。下面的 `MyLinear` 就是亲手写出来的 `nn.Linear`。没有偏置时，它调用 `register_parameter("bias", None)`：`self.bias` 读出来是 `None`（`forward` 正是靠它来判断），这个名字下也不会列出或保存任何东西。PyTorch 的 `nn.Linear(..., bias=False)` 也是这样做的；把 `dt` 换成 `torch`，这个类在 PyTorch 中原样就能运行。
#
# D2L 中文版的[自定义层](https://zh.d2l.ai/chapter_deep-learning-computation/custom-layer.html)一节讲的是同一件事，可以对照着读。

# %% [markdown] en="0fa77f3b"
# **普通列表的陷阱**。模块会在自己的属性中寻找参数，却不会去看 Python 列表的里面。`ScaleShift` 把它的两个参数放在一个列表里；如果那是普通列表，`parameters()` 就列不出它们，优化器也就拿不到它们。什么都不会报错：反向传播照样算出它们的梯度，更新一步之后它们却原地不动，在 PyTorch 中也一样。改正只需要换一个词，用 `nn.ParameterList`：

# %% [markdown] en="ff96558d"
# `ParameterList` 本身是一个模块，按位置给参数命名（上面的 `1.params.0`），会保存它们，也会用 `.to` 搬动它们；`nn.ParameterDict` 则按键命名。交给两者的张量都会变成 Parameter，普通的 `dict` 会按键排好序再放进去，与 PyTorch 相同。

# %% [markdown] en="dc54e174"
# **没有可学习内容的层**。只有 `forward` 也能构成一个层：`Centered` 从每个样本中减去这个样本自己的均值，它没有参数，可以和 `MyLinear` 一起放进 `Sequential`。遍历模型有三种常用的方式：`named_children()` 给出直接子模块及其名字，`named_modules()` 给出树中的每个模块（模型本身排在最前，名字是 `""`），`parameters(recurse=False)` 只给出模块自己持有的参数，不包括子模块的参数。

# %% [markdown] en="d3a7f585"
# ## 导出某一层的权重
#
# 要在另一个模型中复用模型的一部分，比如最后一层，就把这一部分的状态字典保存下来：`dt.save(net[2].state_dict(), path)`。dltutor 写的是 **safetensors** 文件：若干数组，加上一个说明每个数组名字、数据类型和形状的小文件头。我们写到一个临时文件夹里。

# %% [markdown] en="ca74dbe3"
# 要使用这些权重，创建一个形状相同的层，用 `load_state_dict(dt.load(path))` 把它们复制进去。它返回缺失的键和多余的键（这里都没有）；新层现在的计算与 `net[2]` 完全相同。对一个新网络的最后一层 `other[2]` 也一样：只有那一层会改变。

# %% [markdown] en="c0c9e7f8"
# 形状不匹配时，加载会失败，报错信息会列出每个不匹配的键以及两边的形状。下面这个单元格本来就会失败，它的英文报错是说：这个状态字典与这个 Linear 不匹配，什么都没有改变；形状不匹配的是 `'weight'`，模型为 (2, 8)、状态字典为 (1, 8)，以及 `'bias'`，模型为 (2,)、状态字典为 (1,)。

# %% [markdown] en="df5bd685"
# ### 深入一步：被拒绝的加载什么都不改变，以及文件里面有什么
# 被拒绝的加载让层保持原样，为什么用 safetensors 而不用 pickle，NumPy 的读取器在文件里找到什么，以及 PyTorch 只加载了一半的情形。

# %% [markdown] en="39cbe7fe"
# 失败的加载**什么都不改变**。在 `Linear(4, 1)` 中，偏置（形状 (1,)）是合适的，但权重不合适，于是整个加载被拒绝：偏置保持原来的值，而不是被加载了一半。

# %% [markdown] en="ec3395d2"
# safetensors 文件里是若干数组和一个小 JSON 头；加载它只可能得到数组，而 pickle（`torch.save` 写的格式）在加载时可以运行代码，PyTorch 2.13 的 `torch.load` 会拒绝这样做，除非你传入 `weights_only=False`。任何 safetensors 读取器都能打开这个文件。下面是 NumPy 的读取器在里面找到的东西：两个数组，用的是这一层给它们起的名字。

# %% [markdown] en="6c0c90be"
# **这里 dltutor 与 PyTorch 不同**。PyTorch 的 `load_state_dict` 会边检查边复制每个合适的条目，到最后才报错，所以在同样的错误之后，PyTorch 的偏置已经是文件里的值了：这一层一半是新的、一半是旧的，而且没有任何提示告诉你是哪一半。这里没法直接算给你看（本套件不含 PyTorch）：`tests/frameworks/test_ch02_access.py` 在 PyTorch 2.13 中运行了完全相同的情形——让一个 `Linear(4, 1)` 加载 `Linear(8, 1)` 的状态字典——并检查它抛出指明 `size mismatch for weight` 的 `RuntimeError`，而此后偏置已是文件里的值、权重仍是旧值。下面把 dltutor 的 `small` 在加载被拒绝之后的状态与文件并排列出：

# %% [markdown] en="6de8023f"
# ## 缓冲区：不是参数的状态
#
# 层里保存的有些数字是测出来的，而不是学出来的：BatchNorm 的滑动均值和方差、训练数据的均值和离散程度。它们必须和模型一起保存，也要跟着模型走，但任何优化器都不能改动它们。PyTorch 和 dltutor 把这样的张量叫作**缓冲区**（buffer），用 `self.register_buffer(name, tensor)` 注册；加上 `persistent=False` 时，它仍然跟着模型走，但不进入状态字典。作为普通属性保存的张量 `self.scale = ...` 既不保存也不搬动。下面的 `Standardize` 先用测得的均值和离散程度把输入标准化，再接一个 `Linear`；每一种张量它都有。

# %% [markdown] en="de2df99b"
# 状态字典里有参数和持久缓冲区，而 `parameters()`，也就是交给优化器的东西，只有参数。一步训练之后，缓冲区没有梯度，也分毫未变。

# %% [markdown] en="74bb6feb"
# `model.to(...)` 会带上每个参数和缓冲区，无论是否持久；普通属性则被留在原处。当加载后的模型与保存前的表现不一样时，要找的就是这种普通属性。这里的“搬动”是转换成 float64（第 11 章用同样的方法把模型搬到 GPU）：

# %% [markdown] en="897b142e"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 某一层的参数 | `net[2].state_dict()` | `net[2].state_dict()` | `net[2].state_dict()` | `net[2].state_dict()` |
# | 参数类 | `nn.Parameter` | `torch.nn.Parameter` | `paddle.nn.Parameter`（或 `paddle.create_parameter(...)`，设置通过 `ParamAttr`） | `megengine.Parameter` |
# | 以 NumPy 形式取值 | `p.numpy()`、`p.data` | `p.detach().numpy()` | `p.numpy()` | `p.numpy()` |
# | 梯度 | `p.grad` | `p.grad` | `p.grad` | `p.grad` |
# | 名字和值 | `named_parameters()` | `named_parameters()` | `named_parameters()` | `named_parameters()` |
# | 按名字取一个参数 | `net.get_parameter("2.bias")` | `net.get_parameter("2.bias")` | `net.state_dict()["2.bias"]` | `dict(net.named_parameters())[name]` |
# | 添加一个有名字的子模块 | `add_module("block 0", m)` | `add_module("block 0", m)` | `add_sublayer("block 0", m)` | 赋值给一个属性 |
# | 参数一览表 | `dt.diagnose.summary(net)` | — | `paddle.summary(net, input_size)` | `megengine.utils.module_stats.module_stats(net, input_shapes=...)` |
# | 保存某一层 | `dt.save(net[2].state_dict(), path)`（safetensors） | `torch.save(net[2].state_dict(), path)`（pickle） | `paddle.save(net[2].state_dict(), path)`（1.x：`fluid.io.save_vars`） | `mge.save(net[2].state_dict(), path)` |
# | 加载它 | `layer.load_state_dict(dt.load(path))` | `layer.load_state_dict(torch.load(path))` | `layer.set_state_dict(paddle.load(path))`（1.x：`fluid.io.load_vars`） | `layer.load_state_dict(mge.load(path))` |
# | 不是参数的状态 | `register_buffer("mean", t)` | `register_buffer("mean", t)` | `register_buffer("mean", t)` | 不是 `Parameter` 的 `Tensor` 属性（`named_buffers()`） |
# | 层自己的参数 | `nn.Parameter(t)`，在 `__init__` 中赋值 | `torch.nn.Parameter(t)`，在 `__init__` 中赋值 | `layer.create_parameter([3, 4])`，然后赋值 | `megengine.Parameter(array)`，在 `__init__` 中赋值 |
# | 按名字注册参数，或注册为空 | `register_parameter("bias", None)` | `register_parameter("bias", None)` | `add_parameter("bias", None)` | 给属性赋值（`None` 不会列出） |
# | 列表中的参数 | `nn.ParameterList(params)` | `torch.nn.ParameterList(params)` | `paddle.nn.ParameterList(params)`（只收 Parameter） | 普通的 `list` 属性：MegEngine 会看列表里面（`name.0`） |
# | 字典中的参数 | `nn.ParameterDict({"w": p})` | `torch.nn.ParameterDict({"w": p})` | `paddle.nn.ParameterDict({"w": p})`（只收 Parameter） | 普通的 `dict` 属性（`name.w`） |
# | 子模块、所有模块、自己的参数 | `net.named_children()`、`net.named_modules()`、`net.parameters(recurse=False)` | `net.named_children()`、`net.named_modules()`、`net.parameters(recurse=False)` | `net.named_children()`、`net.named_sublayers(include_self=True)`、`net.parameters(include_sublayers=False)` | `net.named_children()`、`net.named_modules()`、`net.parameters(recursive=False)` |
#
# ## 小结
#
# **两句话**：参数的点分名字能找到它的值、它的梯度（反向传播之前为 None）以及它在状态字典中的条目。状态字典能保存和重新加载模型的任意部分，而缓冲区保存那些要存下来却从不训练的状态。
#
# * `net[i].state_dict()` 以短名字保存第 `i` 层的参数，与参数共享内存。
# * 参数的值是 `p.data` / `p.numpy()`，梯度是 `p.grad`：反向传播之前为 `None`，之后与参数形状相同。
# * 完整名字是子模块名字组成的路径，用点号连接（`'0.block 1.0.bias'`）；索引按位置，名字来自 `add_module`。
# * `dt.save(layer.state_dict(), path)` 导出一层；`load_state_dict(dt.load(path))` 把它加载到形状相同的层中，并拒绝形状不符的加载，列出每个不匹配的键。
# * 自己的层在 `__init__` 中赋值 `nn.Parameter`，在 `forward` 中计算；放在普通列表里的参数优化器看不见：用 `nn.ParameterList` 或 `nn.ParameterDict`。
# * 测得的状态是缓冲区，用 `register_buffer(name, t)` 登记：随模型保存和搬动，从不训练。
#
# ## 练习
#
# 每道练习都有一个供你作答的单元格：把 `____` 换成你的答案，运行这个单元格，最后一行会检查它。`ex.q1.hint()` 给出一条提示（再调用一次给出下一条），`ex.q1.solution()` 显示一种答案，`exercises.progress()` 列出每道练习的完成情况。

# %% [markdown] en="694ef9d6"
# **1.** 只列出 `rgnet[0][2]` 的参数名，按这个块自己给它们起的名字（`block_names`），并数一数它们共有多少个值（`block_values`）。

# %% [markdown] en="bed6b476"
# **2.** 先用 `net.zero_grad()` 回到 `None`，再运行 `net(X).sum().backward()` 两次，中间不清除梯度。在第一次之后（`grads_after_one`）和第二次之后（`grads_after_two`）各用 `.numpy().copy()` 复制一份 `net[2].weight.grad`。两者相差几倍，为什么？

# %% [markdown] en="b872a766"
# **3.** 导出 `net` 的**第一**层，并把它加载到 `rgnet[0][0][0]` 中。然后设置 `loaded = rgnet[0][0][0]`。哪些形状必须匹配？

# %% [markdown] en="8857fc27"
# **4.** 用 `dt.save` 保存整个 `net.state_dict()`，并列出文件中的键（`keys_in_file`）。为什么没有以 `1.` 开头的键？

# %% [markdown] en="906ff82e"
# **5.** 用 `nn.Sequential(*[block1() for _ in range(4)])` 而不是 `add_module` 构建同样的四个块。它的子模块叫什么名字（`child_names`）？

# %% [markdown] en="5ca1b8b1"
# **6.** 写一个函数 `values_per_module(model)`：返回一个字典，键是每个**自己**持有参数的模块的名字（不只是通过子模块持有；模型本身的名字是 `""`），值是这些参数中的数值个数。检查时会数它自己编出来的网络。

# %% [markdown] en="9d767e7d"
# **7.** 写一个层 `Affine(n)`，逐个特征计算 `x * scale + shift`，它有两个形状为 `(n,)` 的参数：`scale` 的初始值全为 1，`shift` 的初始值全为 0。`Affine(n, shift=False)` 没有 shift：把它注册为 `None`。在单元格中写好这个类，再交上 `affine = Affine(4)`：检查时会用它的类再构造两种大小的层，给它们的参数设置检查器自己的值，并核对梯度。
