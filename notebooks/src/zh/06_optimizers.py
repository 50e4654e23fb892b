# %% [markdown] en="1cd00a01"
# # 优化器与参数组
#
# **约 30 分钟**。学完本章，你将能够：
#
# * 为每组参数设置各自的学习率（learning rate），查看这些参数组（parameter group），并手算一步来证明结果；
# * 把两个更新规则不同的优化器当作一个来用，并只训练网络的一部分；
# * 给单个参数设置学习率倍数（learning-rate multiplier）或正则化项（regularizer），并判断哪个设置优先；
# * 让偏置和其他一维参数不做权重衰减（weight decay）；
# * 解释把一个参数两次交给优化器会出什么问题。
#
# 优化器（optimizer）是训练中改变网络内部数值的部分。最简单的优化器对所有参数一视同仁，但真实的训练很少这样：你可能希望预训练的卷积层更新得慢一些、新的分类器更新得快一些，偏置不做权重衰减，一部分用 Adam、另一部分用 SGD，或者某一部分完全不训练。本章在一个小型卷积网络上逐一实现这些做法，并通过比较一步前后的参数值来**证明**发生了什么，常常还与手算的一步对照。

# %% [markdown] en="6aec99ff"
# ## 网络与数据
#
# 数据是 scikit-learn 自带的 1797 个手写数字：8×8 的灰度图像，十个类别；前 1500 个用于训练，其余的用来衡量准确率。网络是一个为 8×8 图像设计的小 LeNet：两个卷积层，然后是两个全连接（“fc”）层。第 7 章也用它，所以它放在本套件的 `dltutor.examples` 中：

# %% [markdown] en="7dd6d9d5"
# 它的各层是属性 `conv1`、`conv2`、`fc1` 和 `fc2`，所以从每个参数的名字就能看出它属于哪种层；下面会按名字挑选参数。

# %% [markdown] en="e3424bc7"
# 八个参数张量：每层一个权重、一个偏置。`dltutor.examples` 还包含下面每个实验都要重复用到的几个辅助函数。其中最需要了解的是训练循环：

# %% [markdown] en="4796259f"
# 其他几个：`make_net(seed)` 用固定的种子构建一个新网络，`make_loader()` 把训练集的数字打乱后按每批 64 个取出（每次的顺序都一样），`accuracy(net)` 给出网络在测试集上答对的比例，`snapshot(params)` 复制参数的值（`p.numpy()` 与参数共享内存）。

# %% [markdown] en="7985d0ae"
# ### 深入一步：作为模块的损失函数
#
# `nn.CrossEntropyLoss`，即 PyTorch 代码的写法，以及它的 `reduction` 设置。

# %% [markdown] en="6442e15a"
# 损失是第 1 章的交叉熵。`nn.CrossEntropyLoss()` 是它的模块形式，也就是 PyTorch 代码的写法：一个只有一个设置 `reduction` 的模块。`"mean"`（默认）对每个样本的损失取平均，`"sum"` 求和，`"none"` 返回每个样本的损失。它的计算与 `F.cross_entropy` 完全相同（各章两种写法都会用）：

# %% [markdown] en="a0a34042"
# ## 用参数组设置不同的学习率
#
# 交给优化器的可以不是一个扁平的参数列表，而是一个**字典列表**：每个字典是一个参数组，有一个 `"params"` 条目，还可以有自己的超参数；组里没有设置的，都取传给优化器的值。
#
# 这里把卷积参数（`"conv" in name`）放在一组，使用默认学习率 0.05；其他所有参数放在第二组，学习率为 0.01。`diagnose.summary` 列出每个参数所在的组，以及优化器实际会对它使用的学习率。

# %% [markdown] en="4d50b610"
# 我们传入的是 `(name, parameter)` 对，所以优化器知道每个参数的名字（报错等提示信息、检查点和下面的诊断都会用到这些名字）。像 PyTorch 那样传入普通的参数列表，构建出的参数组完全相同：

# %% [markdown] en="6daa48fd"
# 训练一步就能证明。用普通 SGD 时，参数恰好移动 `lr * gradient`，所以 `(old - new) / gradient` 在第一组必须是 0.05，在第二组必须是 0.01。

# %% [markdown] en="b59e87e9"
# ## 查看参数组
#
# 参数组保存在 `opt.param_groups` 中，它是一个普通的字典列表。每个字典在 `"params"` 下保存该组的参数，还保存**所有**超参数，包括从优化器默认值继承来的那些（这里是 `momentum`、`weight_decay` 等）：每个组的键都相同，只是值不同。`print(opt)` 逐组显示它们，我们给出的名字则随参数一起保存在 `"param_names"` 中。

# %% [markdown] en="6e32ae89"
# ## 对不同的参数使用不同的优化器
#
# 同一个优化器的各个参数组共用一条更新规则。要让不同部分使用不同的规则，比如卷积层用 SGD、全连接层用 Adam，就创建两个优化器。`optim.MultiOptimizer` 把它们包装起来，这样训练循环仍然只调用一次 `zero_grad()` 和一次 `step()`（它只是依次调用每个优化器，并拒绝两个优化器同时持有的参数）。

# %% [markdown] en="ea9647c1"
# **Adam 做了什么**。Adam 为每个元素维护两个滑动平均（running average）：梯度的滑动平均反映方向，相当于动量（momentum）中的 `buf`；梯度平方的滑动平均反映大小。每一步按前者除以后者的平方根来更新（本节末尾用 NumPy 写出了公式）。一步就能看到两条规则：SGD 让卷积参数移动 `lr * gradient`，而 Adam 的第一步让每个元素移动的距离几乎恰好等于它的学习率 0.01，与梯度大小无关。

# %% [markdown] en="7714deac"
# 继续训练，循环和前面一样：

# %% [markdown] en="48971ab6"
# 如果各个优化器并不在同一时刻更新（一个每批更新，一个每 10 批更新），就不用这个包装器，在需要的地方分别调用每个优化器的 `step()` 和 `zero_grad()`。

# %% [markdown] en="7ea6a755"
# ### 深入一步：用 NumPy 写出 Adam 的更新
#
# “按前者除以后者的平方根来更新”背后的公式，以及其中的 `eps`。

# %% [markdown] en="d2a43090"
# 用 NumPy 写出第 `t` 步：
#
# ```python
# m = beta1 * m + (1 - beta1) * grad            # beta1 = 0.9；m 和 v 从 0 开始
# v = beta2 * v + (1 - beta2) * grad ** 2       # beta2 = 0.999
# param -= lr * (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)) + eps)
# ```
#
# 除以 `1 - beta ** t` 是为了抵消两个平均从 0 开始的影响，所以 `t = 1` 时这一步就是 `lr * grad / |grad|`。`eps` 让梯度一直为 0 的元素也能做这个除法，所以 dltutor 拒绝 `eps=0`：PyTorch 接受它，这样的元素就会得到 0/0 = NaN。

# %% [markdown] en="305a44c0"
# ## 只训练一部分参数
#
# 若只想训练卷积层，最先想到的办法是只把它们交给优化器。这能让全连接层不再移动，但反向传播（backpropagation）仍在计算它们的梯度（白费功夫），而且 `opt.zero_grad()` 只清空优化器自己那些参数的梯度，所以这些梯度会一步步累积起来：

# %% [markdown] en="d6c4f447"
# 梯度钩子（第 5 章介绍过）记录每次反向传播传到 `fc2.bias` 的梯度。两步之后，`.grad` 里是两次传播的梯度之**和**，约为单次传播的两倍（两次用的是同一个批量，全连接层也没有移动），而每个卷积层的梯度都只是一次传播的梯度。

# %% [markdown] en="0586a509"
# 干净的做法是关掉梯度：对不该训练的层调用 `requires_grad_(False)`。这样反向传播会跳过它们，它们的 `.grad` 保持 `None`；优化器会跳过任何没有梯度的参数，也就不会碰它们。这时只把可训练的参数交给优化器，是为了整洁，并非必需。第 8 章会比较几种冻结（freeze）方法：`requires_grad`、学习率设为 0、`lr_mult = 0` 和 `detach`。

# %% [markdown] en="2a9059eb"
# ## 优化器的设置与参数的设置
#
# Paddle 允许你把设置附加在参数本身上（它的 `ParamAttr`）；dltutor 把这些设置作为每个 `Parameter` 的属性。其中两个决定优化器怎样对待它：
#
# * `p.lr_mult`：一个**倍数**。这个参数实际得到的学习率是所在组的学习率 × `p.lr_mult`（默认 1.0；0 会冻结它）。
# * `p.regularizer`：一个 `optim.L2Decay(c)` 或 `optim.L1Decay(c)`。对这个参数，它**取代**优化器（或它所在组）的 `weight_decay`。
#
# 在 Paddle 中，这些规则只对**扁平的**参数列表成立：**Paddle 的参数组会用组的设置把这两者都覆盖掉**，而 dltutor 在任何组里都保留参数自己的设置（细节见本节末尾的“深入一步”）。
#
# 下面的例子中，全连接组的学习率为 0.01、权重衰减为 0.01；`fc1.weight` 把学习率加倍，并用 L1 惩罚代替该组的 L2 衰减。

# %% [markdown] en="14a0781b"
# 现在手工证明。用 SGD 时，先把正则化项的梯度加到损失的梯度上，再按有效学习率走一步：
#
# * `fc1.weight`：`w_new = w - (0.01 * 2) * (g + 0.001 * sign(w))`（它自己的 L1，没有 L2）
# * `fc1.bias`：`b_new = b - 0.01 * (g + 0.01 * b)`（该组的 L2）
#
# （这一步不会改变 `p.grad`：优化器把惩罚项加到它自己的副本上。）

# %% [markdown] en="282b3b3c"
# ### 深入一步：Paddle 和 PyTorch 中的同样设置
#
# Paddle 的 `ParamAttr`，Paddle 3.3 的参数组怎样覆盖它，以及 PyTorch 中只含一个参数的组。

# %% [markdown] en="3671e50f"
# 用 Paddle 的写法，同样的两个设置在创建层时给出：`weight_attr=nn.ParamAttr(learning_rate=2.0, regularizer=optim.L1Decay(0.001))`。dltutor 的 `ParamAttr` 只是在构造时设置 `p.lr_mult`、`p.regularizer`、`p.need_clip` 和 `requires_grad`（Paddle 的 `trainable`）的一种方式；`bias_attr=False` 表示不创建偏置，和 Paddle 一样。

# %% [markdown] en="f772a1c5"
# 在 Paddle 中，这些规则只对**扁平的**参数列表（`parameters=model.parameters()`）成立：此时参数的学习率是优化器的学习率 × 它的 `ParamAttr` 学习率，`ParamAttr` 的正则化项取代优化器的 `weight_decay`。**Paddle 的参数组会把这两者都覆盖掉**：Paddle 3.3 在添加一个组时，把每个参数的 `ParamAttr` 学习率设为该组的 `learning_rate`（组里没有给出时为 1.0），把它的正则化项设为该组的权重衰减（组里没有给出时取优化器的）。AdamW 在正则化项上是例外：它的 `weight_decay` 是解耦的，`ParamAttr` 的正则化项既不取代它，也不会被它覆盖，两者都起作用。
#
# **在这个例子中，Paddle 对 `fc1.weight` 的更新不一样**。在 Paddle 3.3 中搭建同样的设置：`fc1.weight` 用 `ParamAttr(learning_rate=2.0, regularizer=L1Decay(0.001))` 创建，全连接层放在一个 `"learning_rate": 0.2` 的组里（0.2 × 0.05 = 0.01），优化器设 `weight_decay=0.01`。添加这个组时，这个权重的两项设置都被覆盖（`optimize_attr` 变成 `{'learning_rate': 0.2}`，正则化项变成 `L2Decay(0.01)`），所以 Paddle 让它和 `fc1.bias` 完全一样地移动：`w_new = w - 0.01 * (g + 0.01 * w)`，而不是上面那一步。在 Paddle 中要给某个参数单独的设置，就把它单独放进一个组：`{"params": [fc1.weight], "learning_rate": 0.4, "weight_decay": L1Decay(0.001)}`（组的 `weight_decay` 可以是一个正则化项对象，AdamW 除外，它只接受数值）。`tests/frameworks/test_ch06_optimizers.py` 在 Paddle 中检查了这两步。

# %% [markdown] en="c65a9279"
# **PyTorch 没有 `lr_mult`**（也没有逐参数的正则化项）。在 PyTorch 中，有自己学习率的参数要单独成为一组：`{"params": [fc1.weight], "lr": 0.01 * 2}`。两种写法走出的是同一步：用同一个种子建两个网络，在同一个批量上各走一步：

# %% [markdown] en="9e268a2b"
# ## 对不同的参数使用不同的权重衰减
#
# 一种常见的做法：权重做系数为 0.01 的权重衰减，偏置不衰减（偏置只是平移一个单元的输出；把它往零收缩并不会让模型更简单）。下面给出三种写法，第四种是 Paddle 的做法，放在本节末尾。
#
# **1. 两个参数组**，按名字构建：偏置的名字以 `"bias"` 结尾。

# %% [markdown] en="1584d045"
# 为了单独观察衰减，给每个参数一个恰好为零的梯度，然后走一步。这样只有衰减能移动参数：每个权重缩小为原来的 `1 - lr * 0.01` 倍，而每个偏置必须一动不动。

# %% [markdown] en="d682c6ae"
# **2. 带 `apply_decay_param_fun` 的 AdamW**（Paddle 的思路）。AdamW 的衰减是解耦的：在做 Adam 更新之前，它直接把参数缩小：`p *= 1 - lr * weight_decay`。优化器以每个参数的名字调用你传入的函数，由它决定这个参数是否衰减，所以一个参数组就够了。它需要名字：请传入 `named_parameters()`。

# %% [markdown] en="8cfabda0"
# **在 Paddle 中，这个函数看到的是别的名字**。Paddle 的 AdamW 调用 `apply_decay_param_fun(param.name)`，而 Paddle 参数的 `.name` 是 Paddle 在创建它时自动生成的名字：`conv2d_0.w_0`、……、`linear_1.b_0`（层的类型、一个计数器，然后是 `w` 或 `b`），而不是 `fc2.bias`。所以上面的函数搬到 Paddle 中，会对每个参数都返回 True，**Paddle 连偏置也一起衰减了**，而且不报任何错。可移植的修正办法是：先按结构化名字一次性决定哪些参数衰减，再把 Paddle 会看到的那些名字组成集合交给它：`decay = {p.name for n, p in model.named_parameters() if not n.endswith("bias")}`，以及 `apply_decay_param_fun=lambda name: name in decay`。`apply_decay_param_fun` 和 AdamW 的其他参数，见 Paddle 的中文 API 文档：[AdamW](https://www.paddlepaddle.org.cn/documentation/docs/zh/api/paddle/optimizer/AdamW_cn.html)。
#
# 下面依次是：一个新的 Paddle 进程给我们的 LeNet 参数起的名字，上面那个函数对这些名字的回答，以及修正后的集合：

# %% [markdown] en="1d2bcec8"
# **3. 所有一维参数都不做衰减**。归一化层的权重（它学到的缩放）和偏置也是向量，把缩放往 0 拉会妨碍归一化发挥作用。所以 Transformer 和 ResNet 的训练代码按形状而不是按名字来决定：少于两维的参数不做衰减（在 PyTorch 中写作 `p.dim() < 2`；这里是 `p.ndim < 2`）。下面在一个带 `LayerNorm` 的网络上验证：

# %% [markdown] en="19102460"
# ### 深入一步：第四种写法，给每个偏置一个正则化项
#
# Paddle 的另一种做法：给不该衰减的参数一个强度为零的正则化项。

# %% [markdown] en="b2fe9679"
# 参数自己的正则化项会取代优化器的权重衰减（在 Paddle 中：限于扁平的参数列表，且 AdamW 除外，它的衰减是解耦的；Paddle 的参数组会覆盖它），所以给每个偏置加一个强度为零的 `L2Decay(0.0)`，就为它关掉了衰减，而优化器对其余参数保持 `weight_decay=0.01`：

# %% [markdown] en="3b9062ec"
# ## 一个参数在优化器中出现两次
#
# 一个容易犯的错误：你想让 `fc2` 有自己的学习率，于是给它加了一个参数组，但第一组仍然包含全部参数，`fc2` 的参数也在其中。dltutor 会拒绝，报错信息会指出是哪个参数：

# %% [markdown] en="a0958612"
# 一个参数组把某个参数列出两次，也是一样：

# %% [markdown] en="9e313cf3"
# 报错信息的意思是：参数 #2 出现了两次，而每个参数只能属于一个参数组（PyTorch 在这里只发出警告，然后每步把它更新两次）；绑定的参数是同一个对象，只列一次即可。没有名字的参数按它在列表中的位置称呼，从 0 数起：`#2` 就是第二次列出的 `conv1.weight`。修正办法：把特殊组的参数从通用组中排除。要比较对象（用 `id`），而不是比较值：

# %% [markdown] en="a42c9b88"
# ### 深入一步：PyTorch、Paddle 和 MegEngine 怎样处理重复的参数
#
# 三个框架对列出两次的参数各做什么：实测的结果，以及一个模拟其循环的模型。

# %% [markdown] en="0d3564c7"
# **PyTorch 更宽松**。PyTorch 2.13 拒绝出现在两个组中的参数（`ValueError`：“some parameters appear in more than one parameter group”），但在同一个组中列出两次只会触发一个 `UserWarning`（“optimizer contains a parameter group with duplicate parameters; in future, this will cause an error”），然后 `step()` 遍历列表时会每步把这个参数更新**两次**。在 PyTorch 2.13 中实测（`tests/frameworks/test_ch06_optimizers.py`）：一个权重 `w = 1.0`，梯度始终为 `g = 0.5`，学习率 0.1 的 SGD，走两步。`w` 每一步移动的距离：
#
# | 动量 | `w` 列出一次 | `w` 列出两次 |
# | --- | --- | --- |
# | 0 | 0.05, 0.05 | 0.1, 0.1 |
# | 0.9 | 0.05, 0.095 | 0.1, 0.2305 |
#
# 为什么是这些数？下面的函数用 NumPy 模拟 PyTorch SGD 的循环（模拟的是普通 for 循环版本，也就是 CPU 上张量的默认实现）：先从状态中取出列表中每个条目的动量缓冲区，再遍历列表原地更新每个条目，最后把缓冲区存回去。它只是模型，不是 PyTorch 本身；这个单元格会检查它算出的正是实测的数。

# %% [markdown] en="b1777f00"
# 用动量 0.9 手工算。只列一次时，缓冲区是 `0.5`，然后是 `0.9 * 0.5 + 0.5 = 0.95`，所以两步的移动量是 `0.05` 和 `0.095`。列两次时：第一步两个条目各自新建缓冲区，所以 `w` 移动两次 `0.05`；第二步两个条目共用一个缓冲区，并把它连续更新两次：`0.95`，然后 `0.9 * 0.95 + 0.5 = 1.355`，所以 `w` 移动 `0.095 + 0.1355`。

# %% [markdown] en="d1383f56"
# 在 PyTorch 中，用普通 SGD 时，重复会让这个参数的学习率加倍；用动量时情况更糟，而且每步的效果都在变（缓冲区每步更新两次）。程序不会崩溃，训练只是表现得很奇怪，所以 dltutor 一开始就拦下这种写法。（绑定的参数，即在两层中使用的同一个对象，不算重复：`parameters()` 只列出它一次。见第 5 章。）
#
# Paddle 和 MegEngine 用同样的话拒绝出现在**两个组**中的参数：“some parameters appear in more than one parameter group”（Paddle 3.3 抛出 `ValueError`，MegEngine 抛出 `AssertionError`）。两者都不检查在同一个组中列出两次的参数，接下来的表现则各不相同：
#
# * Paddle 3.3 一声不吭（既不报错也不警告），按列表中的每个条目各更新一次：用普通 SGD 时，上面的 `w` 每步移动 0.1，和 PyTorch 一样。
# * MegEngine（v1.13.4 的源码：`optimizer/sgd.py` 和 `optimizer/optimizer.py`）为列表中的每个条目各创建一次优化器状态。有动量时，`SGD._create_state` 为同一个参数添加两次动量缓冲区，`Optimizer._add_state` 中的 `assert state_name not in state_dict` 让构造函数抛出一个不带任何说明的 `AssertionError` 而中止。普通 SGD 没有状态，能顺利构造，然后每步把这个参数更新两次。

# %% [markdown] en="aae887ed"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 参数组 | `optim.SGD([{"params": a}, {"params": b, "lr": 0.01}], lr=0.05)` | 相同 | `parameters=[{"params": a}, {"params": b, "learning_rate": 0.2}]`（优化器学习率的一个比例；见第 7 章） | 与 dltutor 相同 |
# | 列出参数组 | `opt.param_groups` | `opt.param_groups` | `opt._param_groups` | `opt.param_groups` |
# | 之后再添加一组 | `opt.add_param_group(group)` | `opt.add_param_group(group)` | `opt._add_param_group(group)` | `opt.add_param_group(group)`，优化器有状态（动量、Adam）时再调用 `opt._create_state(group)` |
# | 清除梯度 | `opt.zero_grad()` | `opt.zero_grad()` | `opt.clear_grad()` | `opt.clear_grad()` |
# | 把多个优化器当作一个 | `optim.MultiOptimizer(sgd, adam)` | —（分别调用） | —（分别调用） | —（分别调用） |
# | 只训练一部分参数 | `layer.requires_grad_(False)` | `layer.requires_grad_(False)` | `param.stop_gradient = True` | 只把它们交给 `GradManager` 和优化器 |
# | 逐参数的学习率倍数 | `p.lr_mult = 2.0` | — | `ParamAttr(learning_rate=2.0)`（仅限扁平列表：参数组会用组的 `learning_rate` 覆盖它） | — |
# | 逐参数的正则化项 | `p.regularizer = optim.L2Decay(c)`（取代优化器的） | — | `ParamAttr(regularizer=L2Decay(c))`（在扁平列表中取代优化器的；参数组会用组的衰减覆盖它） | — |
# | 按名字决定是否衰减 | `AdamW(..., apply_decay_param_fun=f)`，`f("fc2.bias")` | —（用两个参数组） | `AdamW(..., apply_decay_param_fun=f)`，`f("linear_1.b_0")`：自动生成的名字 | —（用两个参数组） |
# | 参数出现在两个组中 | `ValueError`，并指出它 | `ValueError` | `ValueError` | `AssertionError` |
# | 参数在一个组中出现两次 | `ValueError`，并指出它 | 一个警告，然后每步更新两次 | 不检查：每步更新两次 | 不检查：优化器有状态（动量）时抛出 `AssertionError`；普通 SGD 每步更新两次 |
#
# MegEngine 的中文文档在[参数优化](https://www.megengine.org.cn/doc/stable/zh/user-guide/model-development/optimizer/index.html)一页讲它的优化器和参数组。

# %% [markdown] en="e8a4edbc"
# ## 小结
#
# **两句话**：传给优化器的设置只是默认值，参数组可以覆盖它们，而参数自己的 `lr_mult` 和 `regularizer` 再细化所在组的设置。每个参数恰好属于某一个优化器的某一个参数组。
#
# * **参数组**是一个字典 `{"params": ..., "lr": ..., ...}`；组里没有给出的，都取传给优化器的值。`opt.param_groups` 是它们的实时列表。
# * 不同部分用不同的更新规则：使用多个优化器，并用 `MultiOptimizer` 统一调用。
# * 只训练网络的一部分时，关掉梯度（`requires_grad_(False)`）：其余部分的 `.grad` 保持 `None`，优化器会跳过它们。只把参数排除在优化器之外，只能让它们不动；它们的梯度仍会累积。
# * 参数的 **`lr_mult`** 乘以它所在组的学习率；它的 **`regularizer`** 取代优化器的权重衰减。Paddle 的 `ParamAttr` 也是如此，但仅限扁平的参数列表：Paddle 的参数组会把两者都覆盖掉。
# * 偏置不衰减的做法：两个参数组，或 AdamW 的 `apply_decay_param_fun`（在 Paddle 中它看到的是自动生成的名字）；常用的做法是所有一维参数都不衰减（`p.ndim < 2`）。
# * 一个参数在优化器中只能出现一次；dltutor 会报错，而对在同一个组中列出两次的参数，PyTorch（发出警告后）和 Paddle 每步都会把它更新两次。
#
# 第 7 章会在网络训练的过程中改变学习率。
#
# ## 练习
#
# 每道练习都有一个供你作答的单元格：把 `____` 换成你的答案，运行这个单元格，最后一行会检查它。`ex.q1.hint()` 给出一条提示（再调用一次给出下一条），`ex.q1.solution()` 显示一种答案，`exercises.progress()` 列出每道练习的完成情况。

# %% [markdown] en="e7fef2b0"
# **1.** 在一个新的 `make_net()` 上设置 `net.conv1.weight.lr_mult = 0`，用 `make_loader()` 的第一个批量走一步 SGD（学习率 0.05）。`conv1.weight` 移动了多少（`moved`：任一元素的最大变化量）？它还会得到梯度吗（`grad_norm`：`net.conv1.weight.grad` 的范数）？`diagnose.why_not_updating(net, opt, "conv1.weight")` 会告诉你原因。

# %% [markdown] en="df06b51d"
# **2.** 你要把偏置不衰减的 AdamW 移植到 Paddle。利用 `paddle_generated`（Paddle 给我们的 LeNet 起的名字），构建集合 `decay_names`，收入应当衰减的那些参数的 Paddle 名字，使 `apply_decay_param_fun=lambda name: name in decay_names` 只让权重衰减。

# %% [markdown] en="e0a2092b"
# **3.** 构建 `fc2_opt`：一个作用于 `net` 的 SGD，其中 `fc2` 的两个参数以学习率 0.001 训练，其他每个参数以默认学习率 0.05 训练，每个参数恰好在一个组中。

# %% [markdown] en="58a081cb"
# **4.** 写一个函数 `decay_groups(model, weight_decay)`，对任何模型返回上面第 3 种做法的参数组：二维及以上的参数按 `weight_decay` 衰减，一维参数（偏置、归一化层的权重）完全不衰减，每个参数恰好属于一个组。检查程序会用它自己构造的几个网络来调用这个函数。

# %% [markdown] en="8c4c266b"
# **5.** （不做检查，供你实验。）让卷积组的学习率为 0.1、全连接组为 0.001，训练 10 轮（epoch）：测试准确率是升还是降？比较“卷积层用 SGD、全连接层用 Adam”与“全部用 Adam”。`two_steps` 在讲重复参数的“深入一步”一节中：把 `w` 列三次、动量取 0.9，用它运行两步；运行之前先手工算出这两步各移动多少。
