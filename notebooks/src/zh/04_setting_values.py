# %% [markdown] en="07794af4"
# # 设置参数的值
#
# **约 25 分钟**。学完本章，你将能够：
#
# * 原地改变参数中的数（`set_value`、在 `no_grad` 中赋值），让优化器仍然训练它；
# * 把预训练词向量加载到一个新的嵌入层（embedding layer），或者加载到模型里已有的嵌入层中；
# * 翻译 Paddle 的 `ParamAttr` 设置，并把 Paddle 权重 `(in, out)` 的布局转过来；
# * 先给延后初始化（lazy initialization）的层送入第一个批量，再初始化它或为它创建优化器。
#
# 第 3 章用随机规则给参数赋初值。很多时候你手里已经有了这些数：在别处训练好的词向量，来自 NumPy 或其他框架的权重矩阵，或者一个想亲手试试的值。本章把它们放进参数，同时不破坏持有这个参数的任何东西；最后介绍要等到第一个批量才知道自己输入大小的层。

# %% [markdown] en="50a7b67e"
# ## 直接设置参数值
#
# 有时你只是想改几个数：给每个权重加 1，或者把某个元素设为 42。有两种可行的方法，都会**原地**修改参数：
#
# * 在 `with dt.no_grad():` 中用索引赋值；
# * `p.set_value(array)`（Paddle 的名字）：把一个完整的新值复制进去，并检查形状。

# %% [markdown] en="f25f2e39"
# 用 `set_value` 做同样的事，在 NumPy 副本上操作：

# %% [markdown] en="e51f8f91"
# 在 `no_grad()` 之外，这样的赋值会被拒绝：写入一个自动微分（autograd）可能还需要的张量，会悄悄地破坏梯度。报错的意思是：给需要梯度的张量赋值会改变反向传播（backpropagation）要用的值；请在 `with dt.no_grad():` 中赋值，参数则可以用 `p.set_value(...)`。

# %% [markdown] en="939e5ca7"
# **为什么要原地修改**？因为别处持有的是参数对象本身：优化器保存着它要更新的参数列表，绑定的层（第 5 章）是同一个对象出现在两个地方。`set_value` 和索引赋值改变的是这个对象里面的数，所以大家看到的都是它：

# %% [markdown] en="589c8a4b"
# 给属性赋一个新值会切断这种联系。dltutor 拒绝在这里放普通张量（参数必须仍然是 `Parameter`）：

# %% [markdown] en="7ef7f162"
# 报错的意思是：不能把普通张量赋给 Linear 的参数 `'weight'`；请赋一个 `nn.Parameter`，或用 `weight.set_value(...)` 修改它的值。新的 `nn.Parameter` 倒是会被接受，但它是另一个对象，之前建好的优化器并不知道它，所以这一层的新权重永远不会被训练。走一步就能看出来：新权重得到了梯度，却保持原样（第 8 章的 `why_not_updating` 会替你找出这样的参数，以及参数不训练的其他原因）：

# %% [markdown] en="5adc2147"
# ## 把预训练词向量加载到嵌入层
#
# `nn.Embedding(num_words, dim)` 是一张每个词一行的表；查找词 `i` 就返回第 `i` 行。在别处训练好的词向量（word2vec、GloVe、fastText）以文本或二进制文件的形式提供，你把它们读进一个 NumPy 数组，词表中的每个词一行。下面是一个很小的 GloVe 风格的文本文件（一个词，后面跟着它的数），用普通的 Python 读取：

# %% [markdown] en="7686bd2e"
# **用数组创建一个新层**：`nn.Embedding.from_pretrained(array)`。和 PyTorch 一样，这张表默认是**冻结**（freeze，即 `requires_grad=False`）的：预训练向量常常保持不变，而网络的其余部分继续学习。传入 `freeze=False` 就可以微调它们。

# %% [markdown] en="52a4eb71"
# 冻结的表得不到梯度，而它后面的层可以：

# %% [markdown] en="120757ef"
# **加载到已有的嵌入层中**——比如它在一个你已经建好的模型里——用 `set_value`（或 `init.assign_`，即 Paddle 的 `Assign` 初始化器）把数组复制进去。这一层保留自己的参数对象，仍然可以训练：

# %% [markdown] en="700bfa20"
# 你的词表里常常有文件不认识的词。从层的随机行开始，只覆盖已知词对应的行：

# %% [markdown] en="6bac0046"
# 形状不对的表会被拒绝，报错信息中会给出两个形状（这里是 3 列，而文件是 4 列；报错的意思是：张量的形状是 (5, 3)，值的形状却是 (5, 4)，请先把值变形为 (5, 3)，要用一个数填满则用 `constant_`）：

# %% [markdown] en="bb122cfa"
# ## 修改全连接层的权重和偏置
#
# Paddle 在创建层时用一个 `ParamAttr` 来设置它的参数：`paddle.ParamAttr(initializer=paddle.nn.initializer.Normal(0.0, 0.02), learning_rate=2.0)` 的意思是“从 N(0, 0.02²) 开始，学习率（learning rate）为优化器学习率的两倍”——前提是优化器拿到的是一个扁平的参数列表（而且不是 Rprop 或 LBFGS，它们会忽略这个学习率）。如果参数放在参数组（parameter group）里（`parameters=[{"params": ...}]`），Paddle 3.3 会用参数组的 `learning_rate`（参数组没给时为 1.0）替换 `ParamAttr` 的学习率，用参数组的 `weight_decay` 替换它的正则化器；而 dltutor 的 `lr_mult` 在参数组里照样有效（见第 6、7 章）。在 dltutor 中，同样的设置是参数的普通属性，在创建层之后设置：
#
# | Paddle `ParamAttr(...)` | dltutor |
# | --- | --- |
# | `initializer=Normal(0.0, 0.02)` | `init.normal_(layer.weight, 0.0, 0.02)` |
# | `initializer=Assign(array)` | `layer.weight.set_value(array)` 或 `init.assign_(layer.weight, array)` |
# | `learning_rate=2.0` | `layer.weight.lr_mult = 2.0` |
# | `learning_rate=0.0` | `layer.weight.lr_mult = 0.0`（永远不动） |
# | `regularizer=L2Decay(1e-4)` | `layer.weight.regularizer = optim.L2Decay(1e-4)` |
# | `need_clip=False` | `layer.weight.need_clip = False` |
# | `trainable=False` | `layer.weight.requires_grad_(False)` |
#
# （自己创建参数时也可以直接传入这些设置：`nn.Parameter(array, lr_mult=2.0)`。）第 6 章结合优化器的参数组讲学习率和正则化器，第 8、9 章讲最后两项；这里先看前两项，也就是初始化器。
#
# `ParamAttr` 的每个字段及其默认值，见 Paddle 的中文 API 文档：[ParamAttr](https://www.paddlepaddle.org.cn/documentation/docs/zh/api/paddle/ParamAttr_cn.html)。

# %% [markdown] en="71e65738"
# **来自 NumPy 的固定值**。`set_value` 会把一个数组复制进去。当数组来自 Paddle 时有一个陷阱：Paddle 把 Linear 的权重存成 `(in_features, out_features)`，计算 `x @ W + b`；而 dltutor 和 PyTorch 存成 `(out_features, in_features)`，计算 `x @ W.T + b`。Paddle 的权重必须转置，形状检查会提醒你（报错的意思是：参数的形状是 (4, 16)，新值的形状却是 (16, 4)，请先变形；这里要做的是转置）：

# %% [markdown] en="8cdfe9b3"
# ## 延后初始化：让第一个批量决定输入大小
#
# 到目前为止的每一层都被告知了输入大小（`nn.Linear(4, 8)`）。在很长的网络中这既繁琐又容易出错：图像尺寸一变，后面每个 `in_features` 都得手工重算。**延后初始化**的层把它省掉了。`nn.LazyLinear(8)` 只知道输出大小；它的权重还不可能有形状，所以一开始是一个 `UninitializedParameter`。第一次前向传播看到输入后，会用默认初始化创建权重和偏置，并把这一层变成普通的 `Linear`。PyTorch 正是这样做的，D2L 中文版的第 5 章“深度学习计算”（即英文版的 Builders' Guide）也通篇使用它。D2L 中文版中对应的一节是[延后初始化](https://zh.d2l.ai/chapter_deep-learning-computation/deferred-init.html)。

# %% [markdown] en="ff822963"
# 在那之前，任何需要参数值或形状的操作都会被拒绝，比如读取形状、统计参数个数、调用初始化器、保存，报错信息会说明该怎么做。下面这条报错的意思是：这个 LazyLinear 的权重还不存在（这里要的是它的元素个数）；延后初始化的层在第一次前向传播、看到输入的大小时才创建参数，所以在读取、初始化、保存或优化这些参数之前，先让模型在一个批量上运行一次，例如 `net(X)`。

# %% [markdown] en="899d76c0"
# 所以，在用自己的方式初始化一个延后初始化的网络（像第 3 章那样用 `apply`）**之前**，也在创建它的优化器之前，先让一个批量通过它：PyTorch 的文档规定的就是这个顺序（先“试运行”，再建优化器）。在 dltutor 中，参数被创建时会保持自己的身份，所以在第一个批量之前建好的优化器仍会更新它们。在 PyTorch 2.13 中，`SGD` 和 `Adam` 也能这样用，但 `Adagrad` 在构造函数里就要读取每个参数，遇到未初始化的参数会抛出 `ValueError`；按文档的顺序做才稳妥。把状态字典加载到延后初始化的网络中会按加载的形状创建参数（PyTorch 也是如此）。还要注意一点，PyTorch 也是如此：延后初始化的层在第一个批量时才抽取随机值，晚于所有普通层，所以同一个种子下，带延后初始化层的网络与完整写出来的同一个网络的初始值不同。

# %% [markdown] en="d633e838"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 复制一个数组进去 | `p.set_value(a)`、`init.assign_(p, a)` | `with torch.no_grad(): p.copy_(torch.from_numpy(a))` | `p.set_value(a)`、`nn.initializer.Assign(a)` | `p._reset(mge.tensor(a))`（它的 `init` 函数就是这样做的） |
# | 修改某些元素 | `with dt.no_grad(): p[0, 0] = 42` | `with torch.no_grad(): p[0, 0] = 42` | `p.set_value(...)` | `p[0, 0] = 42`（原地写入） |
# | 预训练的嵌入 | `nn.Embedding.from_pretrained(a)`（冻结）、`nn.Embedding(n, d, weight_init=init.Assign(a))` | `nn.Embedding.from_pretrained(t)`（冻结） | `nn.Embedding(..., weight_attr=ParamAttr(initializer=Assign(a)))` | `M.Embedding.from_pretrained(t)`（冻结） |
# | 逐参数学习率 | `p.lr_mult = 2.0` | 一个有自己 `lr` 的参数组 | `ParamAttr(learning_rate=2.0)`（扁平的参数列表） | 一个有自己 `lr` 的参数组 |
# | Linear 权重的布局 | `(out, in)` | `(out, in)` | `(in, out)` | `(out, in)` |
# | 由第一个批量决定输入大小 | `nn.LazyLinear(out)`、`nn.LazyConv2d(out, k)` | `nn.LazyLinear(out)`、`nn.LazyConv2d(out, k)` | —（给出 `in_features`） | —（给出 `in_features`） |
#
# 在创建层时就加载词向量的 Paddle 代码（`weight_attr=ParamAttr(initializer=Assign(array))`）也可以逐行翻译：dltutor 的 `init.Assign` 对象调用的就是 `init.assign_`。

# %% [markdown] en="56b7e4b2"
# ## 小结
#
# **两句话**：原地把数放进参数（`set_value`，或在 `no_grad` 中赋值），这样优化器和每处绑定持有的仍是它们训练的那个对象。延后初始化的层从第一个批量得到形状：在初始化它或创建它的优化器之前，先运行一个批量。
#
# * `p.set_value(array)` 复制进一个完整的新值并检查形状；在 `dt.no_grad()` 中用索引赋值可以改其中一些元素。给属性赋一个新的 `Parameter`，优化器训练的仍是旧的那个。
# * 预训练向量：`nn.Embedding.from_pretrained(array)`（默认冻结），或用 `set_value` 写进已有的表；只覆盖文件里有的那些词所在的行。
# * Paddle 的 `ParamAttr` 设置在这里都是属性：初始化器用 `init.*`，以及 `lr_mult`、`regularizer`、`need_clip`、`requires_grad`。Paddle 的 Linear 权重是 `(in, out)`：要转置。
# * `nn.LazyLinear(out)` 从第一个批量得到输入大小：在读取、初始化或保存它的参数之前，先运行一个批量。
#
# ## 练习
#
# 把 `____` 换成你的答案并运行这个单元格；`ex.q1.hint()` 和 `ex.q1.solution()` 可以帮你。

# %% [markdown] en="fa66ff6d"
# **1.** 用 `nn.Embedding.from_pretrained(vectors, freeze=False)` 加载六个词向量，对 `table(dt.tensor([0, 2])).sum()` 做一步 SGD，列出发生变化的行（`changed_rows`）。

# %% [markdown] en="92a0d9d9"
# **2.** 写一个函数 `load_known_rows(table, vocab, vectors, word_id)`：嵌入表 `table` 的第 `i` 行对应单词 `vocab[i]`；把文件里有的每个词的向量复制进去（`word_id` 把一个词映射到它在 `vectors` 中的行），其余的行保持原样。检查时会用它自己编出来的词表和向量长度调用这个函数，并确认这张表仍是原来的参数对象。

# %% [markdown] en="a64532d6"
# **3.** 写一个函数 `load_paddle_linear(fc, weight, bias)`，把一个 Paddle Linear 层的 `weight`（形状为 `(in_features, out_features)`）和 `bias` 放进 dltutor 的层 `fc`，让 `fc(x)` 算出 Paddle 算的结果 `x @ weight + bias`。检查时会试几种层的大小。
