# %% [markdown] en="29a72952"
# # 参数绑定
#
# **约 25 分钟**。学完本章，你将能够：
#
# * 绑定一整层或单个参数，并用 `is` 或 `dt.diagnose.ties` 检查绑定关系；
# * 说出绑定参数得到的是什么梯度，并与一个不绑定的孪生网络对照来证明它；
# * 让几个输入列在同一张嵌入表中查找；
# * 保存和加载一个带绑定的网络而不丢掉绑定关系，并读懂它的状态字典怎样列出绑定参数；
# * 训练一个带绑定层的网络，并逐步观察它的各种范数。
#
# 有时网络的两个部分应该使用**同一组**权重：同一层在几个深度上重复使用，同一张嵌入表被几个输入列查找，语言模型的输出层复用它的输入嵌入。这叫作**参数绑定**或参数共享（tying / sharing parameters），本套件统一称绑定。
#
# 在 dltutor（和 PyTorch）中，这不需要任何特殊机制：把同一个对象用两次就行。本章展示这条简单规则带来的结果。

# %% [markdown] en="b0bcebab"
# ## 在多处使用同一层
#
# 只创建一次这一层，给它起个名字，然后把它放进网络两次。这里 8 × 8 的层 `shared` 是 Sequential 中的第三个和第五个模块：

# %% [markdown] en="287a49dd"
# `net[2]` 和 `net[4]` 不是数值相等的两层：它们是从两个位置到达的**同一**层。Python 的 `is` 检查两个名字是否指向同一个对象：

# %% [markdown] en="42a985ac"
# 所以改变一个就改变了“另一个”——根本没有另一个：

# %% [markdown] en="3d8931f2"
# 数值相等是不够的。用 `load_state_dict` 做出的副本一开始相等，但之后各走各的路：

# %% [markdown] en="afebbe5f"
# 你也可以通过赋值，只绑定两个不同层的某一个**参数**。下面，`b` 使用 `a` 的权重，但保留自己的偏置。（最后一节中绑定的嵌入就是这样做出来的。）

# %% [markdown] en="57ade939"
# ## 绑定参数的梯度会怎样
#
# 绑定层在前向传播中被用了两次，所以损失通过两条路径依赖于它的权重：导数是各条路径之和，反向传播（backpropagation）把每次使用的贡献都加到同一个 `.grad` 上。
#
# 为了证明这一点，构建一个**不绑定**的孪生网络：同样的结构，在位置 2 和 4 放两个独立的 8 × 8 层，并加载绑定网络的值。绑定网络的状态字典以两个名字 `2.weight` 和 `4.weight` 列出这个绑定的权重，下面会细说。

# %% [markdown] en="93b4c863"
# 每次使用贡献的东西都不同（两层处在不同的深度），绑定参数得到的是它们的和。对同样的绑定网络，PyTorch 2.13 给出同样的和。

# %% [markdown] en="3a43d68a"
# ### 深入一步：挂在绑定参数上的钩子
# 绑定参数上的梯度钩子运行几次、拿到的是什么。

# %% [markdown] en="3e7d53ff"
# 挂在绑定参数上的**钩子**会在它的梯度准备好时运行。它只触发**一次**，得到的是总和，而不是每次使用各触发一次（在 PyTorch 2.13 中也是如此）：

# %% [markdown] en="9a39420e"
# ## 多个特征共用一张嵌入表
#
# 一个常见的情形：推荐模型有两列保存同一类东西——“用户 id”和“好友 id”——两者都应该在**同一张**用户向量表中查找。在 dltutor（以及 PyTorch 和 Paddle 的动态图）中，只需要对两列调用同一个 `nn.Embedding` 模块。

# %% [markdown] en="dda39bd9"
# 用户 0 和 1 在两列中都出现了，所以它们的行从每一列各得到一份贡献；用户 4 哪里都没出现，它的行得到零。和前面一样，与保存相同数值的两张独立的表比较一下：

# %% [markdown] en="ec8effb6"
# 如果两次查找必须是独立的模块——比如别人的模型里已经有两个 `nn.Embedding` 层——那就事后把一个的权重赋给另一个来绑定它们（同样这一行在 PyTorch 和 Paddle 的动态图中也适用）：

# %% [markdown] en="a455ee00"
# ### 深入一步：Paddle 的名字，对照来看
# Paddle 的静态图怎样按名字共用一张表，以及它的动态图为什么拒绝这样做。

# %% [markdown] en="ae53bc77"
# 在 Paddle 的静态图中，参数**就是**它的名字：让两次查找使用同名的参数属性，就共用了一张表，每个用 `ParamAttr(name="shared_emb")` 构建的层，都读写程序中那一个同名变量（Paddle 3.3 仍然以它的旧版程序格式、在 `paddle.pir_utils.OldIrGuard()` 中运行这个层）。在 Paddle 的动态图（它的默认模式）、PyTorch 和 dltutor 中，参数是一个**对象**，名字只是个标签（见 Paddle issue 69497）。Paddle 3.3 甚至会拒绝第二个使用相同 `ParamAttr(name=...)` 的层：`ValueError: parameter name [shared_emb] have be been used. In dygraph mode, the name of parameter can't be same.`，意思是参数名 shared_emb 已被占用，动态图模式下参数不能同名。正确的做法是共用同一个对象。
#
# | | Paddle 静态图 | Paddle 动态图、PyTorch、dltutor |
# | --- | --- | --- |
# | 两列共用一张表 | `attr = ParamAttr(name="shared_emb")`，然后对每一列调用 `paddle.static.nn.embedding(ids, size=[5, 3], param_attr=attr)` | 一个 `nn.Embedding(5, 3)`，对每一列各调用一次 |
# | 绑定两个已经存在的层 | （名字在构建程序时就固定了） | `friend_emb.weight = user_emb.weight` |
# | 既有权重又有偏置的层 | `param_attr` 和 `bias_attr` 都要命名，否则只有权重是共用的 | 绑定整个模块，或者两个属性都赋值 |
# | 你看到的 | 程序中的一个变量名 | 一个对象、多个名字（`dt.diagnose.ties`） |
#
# 第三行在两种情况下都会坑人：只绑定两个 `Linear` 层的权重，会留下两个偏置。

# %% [markdown] en="a029e383"
# ## 绑定参数怎样列出和存储
#
# 绑定参数是**一个**对象、**多个**名字。每种列出参数的方式各有选择：
#
# * `parameters()` 和 `named_parameters()` 每个对象只列**一次**（用最先到达它的那个名字）。这正是交给优化器的东西：列了两次的参数每步会被更新两次。
# * `named_parameters(remove_duplicate=False)` 列出每个名字。
# * `state_dict()` 也列出每个名字，这样无论怎样绑定，键总是与网络的结构一致。
#
# PyTorch 2.13 做出同样的三种选择，名字也相同。

# %% [markdown] en="066ddbaa"
# `dt.diagnose.ties` 列出指向同一个对象的各组名字，`summary` 会标出它们，并在合计中每个参数只计一次：

# %% [markdown] en="1e9f4666"
# **在文件中**。`dt.save(net.state_dict(), path)` 写一个 safetensors 文件。任何 safetensors 读取器都能显示里面的内容：两个名字，各带完整的值——文件保存的是数组而不是对象，所以它没法说“这两个是同一个”。

# %% [markdown] en="60a58ef0"
# **加载会保留绑定关系**——只要你加载进去的网络本身带有绑定。绑定由构建网络的代码建立；`load_state_dict` 只是把值原地复制到已有的参数中。构建一个新的绑定网络（随机值不同），加载这个文件：

# %% [markdown] en="c96b803f"
# 把同一个文件加载到**不绑定**的结构中，你会在两个独立的层中得到相等的值：是副本，而不是绑定。第一步训练就会让它们分开：

# %% [markdown] en="e6be6d92"
# ### 深入一步：一个绑定参数的两个值
# 状态字典里同一个绑定参数的几个名字取值不一致时，dltutor 和 PyTorch 各怎么做。

# %% [markdown] en="33702fac"
# **这里 dltutor 与 PyTorch 不同**。状态字典中，绑定参数的每个名字各有一个键，所以它可以为同一个对象保存两个不同的值（手工编辑过，或由两个检查点合并而来）。这时没有正确答案，dltutor 拒绝加载并指出两个键；什么都不改变：

# %% [markdown] en="992aa80b"
# PyTorch 2.13 会一声不响地加载同一个字典。它的 `load_state_dict` 按模块逐个遍历网络，把每个模块的键复制到该模块的参数中，于是两个键都落到同一个张量里，网络**最后**到达的那个名字生效：这里是 `4.weight`，与键在字典中的顺序无关。`2.weight` 下的值就丢失了。本笔记本不运行 PyTorch；`tests/frameworks/test_ch05_tying.py` 在 PyTorch 2.13 中把这样的字典加载进这个绑定网络，并检查了这一点。

# %% [markdown] en="a23cdf3a"
# ## 训练带绑定层的网络
#
# 现在来训练一个。下面的分类器把“两个月牙”数据集的二维点映射到两个类别，中间经过一个被使用**两次**的 16 × 16 隐藏层。为了观察训练，我们使用 `Recorder`（来自 `dltutor.trace`，后面各章画图也用它）。它挂在优化器上，记录每一步每一层（或每个参数）的参数范数、梯度范数和更新量大小；`recorder.series(kind)` 以每步一行的数组返回其中一项，`plot.traces` 把它画出来。

# %% [markdown] en="23dc26b5"
# Recorder 只把绑定层列出一次，名为 `"2"`：它记录的是优化器更新的东西，而优化器为两处使用只持有一个参数。它的梯度范数是两处梯度之和的范数。

# %% [markdown] en="557c8318"
# **为什么要绑定**？
#
# * **参数更少**。绑定网络只有一个 16 × 16 的隐藏层，不绑定的网络有两个，这里省下了 626 个数中的 272 个。参数更少意味着内存更少，从同样的数据中要学的东西也更少。

# %% [markdown] en="c8a1c6af"
# * **每个位置做同样的变换**。使用同一组权重，意味着“这些步骤应该做同样的事”。循环神经网络在每个时间步使用同一个单元；卷积在图像的每个位置使用同一个小卷积核。两者都是权重共享，也正因如此，这些网络能处理任意长度的序列和任意尺寸的图像。
# * **绑定输入和输出嵌入**。语言模型在形状为 `(vocab, dim)` 的嵌入表中查找词，最后用一个 `dim -> vocab` 的 Linear 层给每个词打分，其权重形状同样是 `(vocab, dim)`。两处共用一个矩阵，就省掉了 `vocab × dim` 个参数，这往往是模型中最大的矩阵；Press 和 Wolf（2017）发现这通常还会让模型更好，例如 GPT-2 就是这样构建的。

# %% [markdown] en="aae5b3c5"
# ### 深入一步：PyTorch 中的 Recorder
# `Recorder` 核心的十几行代码，用 PyTorch 也有的优化器钩子写成。

# %% [markdown] en="e2c7e254"
# **PyTorch 中的 Recorder**。PyTorch 2.x 的优化器有 `Recorder` 用到的同样两个钩子：`register_step_pre_hook` 在每次 `step()` 之前运行，`register_step_post_hook` 在之后运行，调用方式都是 `hook(optimizer, args, kwargs)`。在这一步之前，保存每个参数的副本并记下其梯度的范数；之后，变化的大小就是更新量。这几行在 PyTorch 中原样可用（把 `dt` 换成 `torch`）：

# %% [markdown] en="e2eecd05"
# 把它和一个 `Recorder`（每个参数一列）挂到一个新的绑定网络上，训练几步：两者看到的数完全相同。

# %% [markdown] en="00716180"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 绑定一层 | 把同一个模块用两次 | 相同 | 相同（动态图） | 相同 |
# | 绑定一个参数 | `b.weight = a.weight` | `b.weight = a.weight` | 同一个对象，或静态图中用 `ParamAttr(name=...)` | `b.weight = a.weight` |
# | 检查绑定 | `p is q`、`dt.diagnose.ties(net)` | `p is q` | `p is q` | `p is q` |
# | 绑定参数的梯度 | 各处使用之和 | 相同 | 相同 | 相同 |
# | 每个参数只列一次 | `net.parameters()` | `net.parameters()` | `net.parameters()` | `net.parameters()` |
# | 列出每个别名 | `named_parameters(remove_duplicate=False)` | `named_parameters(remove_duplicate=False)` | `named_parameters(remove_duplicate=False)` | — |
# | 文件 | safetensors，每个别名都存储 | `torch.save`：一个装着 pickle 的 zip，共享存储只存一次 | `paddle.save`：pickle | `mge.save`：pickle |
# | 加载会保留绑定吗？ | 会，值被原地复制 | 会（`load_state_dict` 原地复制） | 会（`set_state_dict` 原地复制） | 会 |
#
# ## 小结
#
# **两句话**：绑定就是一个参数对象在几处被使用，所以它的梯度是各处梯度之和，优化器只更新它一次。文件保存的是值而不是绑定：绑定由构建网络的代码建立，往里加载值时它依然保持。
#
# * 要绑定，就在多处使用同一个模块（或赋同一个 `Parameter`）。用 `is` 检查，或用 `dt.diagnose.ties(net)` 列出所有绑定。
# * 绑定参数的梯度是各处使用的梯度之和。
# * 多个输入共用一张嵌入表：对它们各调用同一个 `nn.Embedding`。被多个输入用到的行会得到它们的和。
# * `parameters()` 只把绑定参数列一次（优化器拿到的就是这个）；`state_dict()` 和保存的文件会以每个名字各列一次。
# * 文件保存的是值而不是绑定关系：加载到绑定网络中会保留绑定，加载到不绑定的网络中则得到副本。
# * 绑定能节省参数，在多处做同一种变换，也是语言模型输入 / 输出嵌入的标准做法。
#
# ## 练习
#
# 每道练习都有一个供你作答的单元格：把 `____` 换成你的答案，运行这个单元格，最后一行会检查它。`ex.q1.hint()` 给出一条提示（再调用一次给出下一条），`ex.q1.solution()` 显示一种答案，`exercises.progress()` 列出每道练习的完成情况。

# %% [markdown] en="a9f92b16"
# **1.** 写一个函数 `tie_head(model)`：对一个按 `TinyLM` 的方式搭建的语言模型，在模型建好之后把它的输出层绑定到（tied to）输入嵌入上，让 `model.head` 和 `model.embed` 共用同一个权重。检查时会用其他的词表大小和宽度构建模型。

# %% [markdown] en="afb4fd5d"
# **2.** 修改 `tied` 的状态字典，让 `"2.weight"` 和 `"4.weight"` 保存不同的值，然后加载它。在 dltutor 中会发生什么？捕获这个错误，把错误对象本身保存在 `tie_load_error` 中（`except Exception as err: tie_load_error = err`）。（PyTorch 的行为在“绑定参数怎样列出和存储”一节中：网络最后到达的名字 `4.weight` 悄悄生效。）

# %% [markdown] en="b5e4e0e8"
# **3.** 自编码器的解码器常常使用编码器权重的转置。对 `enc = nn.Linear(4, 6)` 和 `dec = nn.Linear(6, 4)`，给出两个权重的形状（`shapes`）。为什么不能直接赋值 `dec.weight = enc.weight`？

# %% [markdown] en="36a6045a"
# **4.** （不检查：一个实验。）用同样的优化器设置训练月牙分类器的不绑定版本（`untied_mlp`），比较损失曲线和决策边界。提示：再用一个 `Recorder`，两者都用 `plot.traces(rec, "loss")`。
