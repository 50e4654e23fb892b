# %% [markdown] en="3c406e9b"
# # 参数初始化
#
# **约 60 分钟。**学完本章，你将能够：
#
# * 说出 Linear 层的初始值是什么，以及为什么它的范围随输入个数的增加而缩小；
# * 用 `net.apply` 和内置的初始化器初始化每一层，或者让每个块各用各的方式；
# * 写出自定义的初始化器，并原地设置参数的值，让优化器仍然训练它；
# * 把预训练词向量加载到嵌入层中，并按正确的顺序给延迟层送入第一个批量；
# * 选出能让信号和梯度穿过深层网络而不消失的初始化器。
#
# 在第一个训练步之前，每个权重都需要一个值。取什么值比看上去更重要：深层网络的初始值太小，信号经过几层就消失了；太大，信号就会爆炸，或者激活值饱和。无论哪种情况，训练还没开始就停滞了。
#
# 本章先回答实际问题——一层的初始值是什么，怎样换成别的初始化（initialization），怎样放进自己的值（预训练词向量、来自 NumPy 的权重矩阵）——最后在一个 15 层的网络中逐层测量，说明*为什么*这个选择很重要。
#
# 这里的一切都是**原地**进行的：初始化器（initializer）改变参数里面的数，而参数对象本身保持不变。这个细节后面会显得很重要（见“直接设置参数值”一节）。

# %% [markdown] en="64d2965c"
# ## Linear 层的默认初始化
#
# 新建的 `nn.Linear(in_features, out_features)` 会从下面的区间中均匀地抽取每个权重**和**每个偏置：
#
# $$\left[-\frac{1}{\sqrt{\text{fan}_\text{in}}},\ \frac{1}{\sqrt{\text{fan}_\text{in}}}\right],$$
#
# 其中 $\text{fan}_\text{in}$（代码里写作 `fan_in`）就是 `in_features`，即输入到每个输出的输入个数。这是 PyTorch 的默认做法，dltutor 照搬了它。用一个很宽的层可以清楚地看到这个范围：有 1000 个输入时，边界是 $1/\sqrt{1000} \approx 0.0316$。

# %% [markdown] en="4411b82e"
# **这个范围从哪里来。** PyTorch 并没有直接写出这个边界。它的 `Linear.reset_parameters` 调用 `kaiming_uniform_(weight, a=math.sqrt(5))`，也就是负斜率 $a=\sqrt 5$ 的 leaky ReLU 的 He 初始化器。这个初始化器从 $U(-\text{bound}, \text{bound})$ 中抽取，其中
#
# $$\text{bound} = \sqrt 3 \cdot \frac{\text{gain}}{\sqrt{\text{fan}_\text{in}}},\qquad
# \text{gain} = \sqrt{\frac{2}{1 + a^2}} = \sqrt{\frac{2}{6}} = \frac{1}{\sqrt 3},$$
#
# 两个 $\sqrt 3$ 相互抵消，于是 $\text{bound} = 1/\sqrt{\text{fan}_\text{in}}$。看起来奇怪的 $a=\sqrt 5$ 只是恰好让结果如此的那个数。dltutor 的层也做同样的调用，所以同一个种子给出的权重，与你自己调用这个初始化器得到的完全相同：

# %% [markdown] en="4278ce6d"
# **为什么要除以 $\sqrt{\text{fan}_\text{in}}$？** 每个输出要把 `fan_in` 个乘积 $w_i x_i$ 加起来。如果输入的方差是 1，和的方差就是 $\text{fan}_\text{in}\cdot\mathrm{Var}(w)$。取 $\mathrm{Var}(w) = \text{bound}^2/3 = 1/(3\,\text{fan}_\text{in})$，它就是 $1/3$，*与宽度无关*（再加上偏置贡献的 $1/(3\,\text{fan}_\text{in})$，只对很窄的层有影响）：输出的离散程度不再取决于这一层有多少个输入。像 $U(-0.1, 0.1)$ 这样的固定范围就没有这个性质——它的输出会像 $\sqrt{\text{fan}_\text{in}}$ 那样增长。两者都测一下：

# %% [markdown] en="24f5f03f"
# 一层能保持尺度稳定，但请注意这个值：约 0.58，而不是 1。把许多这样的层叠起来，信号在每一层都会缩小一点——最后一节会展示这对深层网络的影响。偏置从同一个范围中抽取（这是 PyTorch 的选择；很多人会像下一节那样把它设为零）。
#
# ## 对每个 Linear 层使用内置初始化器
#
# `init` 提供了常用的初始化器；每个都原地填充一个张量。要作用到网络的每一层，写一个接收**模块**的函数，如果模块是你想要的类型就初始化它，然后把函数交给 `net.apply(fn)`，它会对树中的每个模块调用 `fn`。这里：权重取自标准差为 0.01 的正态分布，偏置为零。

# %% [markdown] en="2938c10b"
# > **从 PyTorch 过来的读者注意：`.data` 就是数组本身。** D2L 和许多 PyTorch 教程写 `m.weight.data.normal_(0, 0.01)` 和 `m.bias.data.fill_(0)`。在 dltutor 中，`p.data` 是保存这些值的 NumPy（或 CuPy）数组，这样你总能看到原始的数；而 NumPy 数组没有 `normal_`、`fill_` 或 `abs()` 方法。对照如下：
# >
# > | PyTorch | dltutor |
# > | --- | --- |
# > | `m.weight.data.normal_(0, 0.01)` | `init.normal_(m.weight, 0, 0.01)` |
# > | `m.bias.data.fill_(0)` | `init.zeros_(m.bias)`（或 `init.constant_(m.bias, 0)`） |
# > | `with torch.no_grad(): m.weight.normal_(0, 0.01)` | `with dt.no_grad(): m.weight.normal_(0, 0.01)` |
# > | `m.weight.data.abs()` | `m.weight.abs()`（一个张量）或 `np.abs(m.weight.data)`（一个数组） |
# >
# > 张量方法 `normal_`、`uniform_`、`fill_` 和 `zero_` 也都有，并且和 PyTorch 一样，在 `no_grad` 之外它们会拒绝修改参数（否则自动微分就无法知道它看到的是哪些值）。

# %% [markdown] en="ccb7b100"
# `apply` 先访问子模块，最后才访问模块本身，所以 `fn` 会看到每一层，包括 ReLU 和 Sequential——这就是 `init_normal` 要检查类型的原因：

# %% [markdown] en="47a3646a"
# 把每个权重都设为同一个常数，做法相同：

# %% [markdown] en="18b2c344"
# 所有权重都相等的网络是没法训练的：一层中的每个单元计算同样的东西、得到同样的梯度，所以无论训练多久它们都保持相同。在随机数据上做五十步 SGD 就能看出来：第一层的八个隐藏单元最后得到八行相等的权重（相等到舍入误差的最后几位）。常数初始化只适合偏置和这样的演示。（`optim.SGD(params, lr)` 是普通的随机梯度下降：每次 `step()` 从它持有的每个参数中减去 `lr × 梯度`，`zero_grad()` 在下一次反向传播之前清除梯度。第 05 章专门讲优化器。）

# %% [markdown] en="4aa9512f"
# ## 对不同的块使用不同的初始化器
#
# `apply` 可以作用于树的任何部分，所以每个块都可以有自己的规则。这里第一层使用 Xavier（Glorot）均匀初始化，第二层使用常数 42。

# %% [markdown] en="acaa60aa"
# Xavier 均匀初始化从 $U(-a, a)$ 中抽取，其中 $a = \text{gain}\cdot\sqrt{6/(\text{fan}_\text{in} + \text{fan}_\text{out})}$；对第一层（4 个输入、8 个输出），$a = \sqrt{6/12} \approx 0.707$。

# %% [markdown] en="7ca0aee8"
# 32 个值只能看出边界。在一个大的权重上，整个分布就显现出来了：这些值填满 $(-a, a)$，它们的标准差就是均匀分布的标准差 $a/\sqrt{3} = \text{gain}\cdot\sqrt{2/(\text{fan}_\text{in} + \text{fan}_\text{out})}$。

# %% [markdown] en="5c86110e"
# 除了每个块写一个函数，也可以按**名字**挑选参数；当规则取决于参数的种类而不是所在的层时，这样很方便：

# %% [markdown] en="d76b91d3"
# Xavier 和 Kaiming 根据一个**矩阵**的扇入扇出计算范围，所以它们拒绝一维的偏置——报错信息会告诉你该用什么代替：

# %% [markdown] en="75d9853c"
# ## 自定义初始化器
#
# 没有合适的内置规则时，就自己写一个：先用内置初始化器抽取，再原地修改这些值。一个经典的练习：每个权重
#
# * 以 1/4 的概率在 $[5, 10]$ 上均匀分布，
# * 以 1/2 的概率为零，
# * 以 1/4 的概率在 $[-10, -5]$ 上均匀分布。
#
# 先在 $[-10, 10]$ 上均匀抽取，再把所有 $|w| < 5$ 的权重清零，得到的正是这个分布。清零是写入参数的操作，所以要在 `dt.no_grad()` 中进行（自动微分不应把它记录为模型计算的一部分）。

# %% [markdown] en="eb682d91"
# 在更大的矩阵上，直方图显示出分布的形状：一个占了一半权重的零值尖峰，加上两侧平坦的“肩膀”。

# %% [markdown] en="238ba8a1"
# 另一种做法，对复杂的规则往往更简单：用 NumPy 算出这些值，再用 `init.assign_`（Paddle 的 `Assign` 初始化器）复制进去。

# %% [markdown] en="8d97eed8"
# **读过 Paddle 版 D2L 吗？** 它在这一节的代码其实什么都没有初始化。在 Paddle 3.3 中，它的两个函数甚至会因 `TypeError` 而中断（`paddle.zeros(m.bias)`：参数不是形状；`m *= h`：float32 张量乘以布尔掩码）；即使把这两行改好，它们仍然什么都不会改变，原因有两个，在任何框架中都值得了解：
#
# * 单独一行 `paddle.nn.initializer.Normal(mean=0.0, std=0.01)` 只是*创建*了一个初始化器对象，然后就把它扔掉了。初始化器只有在被用于某个参数（`Normal(0.0, 0.01)(m.weight)`）或交给某一层（`weight_attr=ParamAttr(initializer=...)`）时才会起作用。`paddle.zeros(...)` 同样只会创建一个新张量。（`XavierUniform(m.weight, -10, 10)` 甚至把权重当作 `fan_in`、把 -10 当作 `fan_out`、把 10 当作 `gain` 传了进去；dltutor 会拒绝，Paddle 3.3 则照样创建这个对象。）
# * `m = paddle.to_tensor(m.weight)` 之后再 `m *= h`，乘的是一个**副本**：名字 `m` 现在指向一个新张量，层的权重没有被动过。要修改参数本身：在 Paddle 中用 `m.weight.set_value(m.weight * h)`，在这里用 `no_grad()` 中的原地修改。
#
# dltutor 也有同样的初始化器对象（`init.Normal`、`init.Uniform` 等，参数与 Paddle 相同），所以这两个错误都可以在这里演示：

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
# 在 `no_grad()` 之外，这样的赋值会被拒绝：写入一个自动微分可能还需要的张量，会悄悄地破坏梯度。

# %% [markdown] en="57351a1d"
# **为什么要原地修改？** 因为别的对象持有的是参数*对象*：优化器保存着它要更新的参数列表，共享的层（第 04 章）是同一个对象出现在两个地方。`set_value` 和索引赋值改变的是这个对象里面的数，所以大家看到的都是它：

# %% [markdown] en="589c8a4b"
# 给属性赋一个*新*值会打断这种联系。dltutor 拒绝在这里放普通张量（参数必须仍然是 `Parameter`）：

# %% [markdown] en="7805293d"
# 而新的 `nn.Parameter` 会被接受——但它是另一个对象，之前建好的优化器从没听说过它。这一层的新权重永远不会被训练。走一步就能看出来：新权重得到了梯度，却保持原样（第 07 章的 `why_not_updating` 会替你找出这样的参数，以及参数不训练的其他原因）：

# %% [markdown] en="5adc2147"
# ## 把预训练词向量加载到嵌入层
#
# `nn.Embedding(num_words, dim)` 是一张每个词一行的表；查找词 `i` 就返回第 `i` 行。在别处训练好的词向量（word2vec、GloVe、fastText）以文本或二进制文件的形式提供，你把它们读进一个 NumPy 数组，词表中的每个词一行。下面是一个很小的 GloVe 风格的文本文件（一个词，后面跟着它的数），用普通的 Python 读取：

# %% [markdown] en="7686bd2e"
# **用数组创建一个新层：** `nn.Embedding.from_pretrained(array)`。和 PyTorch 一样，这张表默认是**冻结**的（`requires_grad=False`）：预训练向量常常保持不变，而网络的其余部分继续学习。传入 `freeze=False` 就可以微调它们。

# %% [markdown] en="52a4eb71"
# 冻结的表得不到梯度，而它后面的层可以：

# %% [markdown] en="120757ef"
# **加载到已有的嵌入层中**——比如它在一个你已经建好的模型里——用 `set_value`（或 `init.assign_`，即 Paddle 的 `Assign` 初始化器）把数组复制进去。这一层保留自己的参数对象，仍然可以训练：

# %% [markdown] en="700bfa20"
# 你的词表里常常有文件不认识的词。从层的随机行开始，只覆盖已知词对应的行：

# %% [markdown] en="6bac0046"
# 形状不对的表会被拒绝，报错信息中会给出两个形状（这里是 3 列，而文件是 4 列）：

# %% [markdown] en="dd3b5e7c"
# ## 修改全连接层的权重和偏置
#
# Paddle 在创建层时用一个 `ParamAttr` 来设置它的参数：`paddle.ParamAttr(initializer=paddle.nn.initializer.Normal(0.0, 0.02), learning_rate=2.0)` 的意思是“从 N(0, 0.02²) 开始，学习速度是优化器学习率的两倍”——前提是优化器拿到的是一个扁平的参数列表。如果参数放在参数组里（`parameters=[{"params": ...}]`），Paddle 3.3 会用参数组的 `learning_rate`（参数组没给时为 1.0）替换 `ParamAttr` 的学习率，用参数组的 `weight_decay` 替换它的正则化器；而 dltutor 的 `lr_mult` 在参数组里照样有效（见第 05、06 章）。在 dltutor 中，同样的设置是参数的普通属性，在创建层之后设置：
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
# （自己创建参数时也可以直接传入这些设置：`nn.Parameter(array, lr_mult=2.0)`。）第 05 章结合优化器的参数组讲学习率和正则化器，第 07、08 章讲最后两项；这里先看前两项，也就是初始化器。

# %% [markdown] en="71e65738"
# **来自 NumPy 的固定值。** `set_value` 会把一个数组复制进去。当数组来自 Paddle 时有一个陷阱：Paddle 把 Linear 的权重存成 `(in_features, out_features)`，计算 `x @ W + b`；而 dltutor 和 PyTorch 存成 `(out_features, in_features)`，计算 `x @ W.T + b`。Paddle 的权重必须转置，形状检查会提醒你：

# %% [markdown] en="8cdfe9b3"
# ## 延迟初始化 让第一个批量决定输入大小
#
# 到目前为止的每一层都被告知了输入大小（`nn.Linear(4, 8)`）。在很长的网络中这既繁琐又容易出错：图像尺寸一变，后面每个 `in_features` 都得手工重算。**延迟**（lazy）层把它省掉了。`nn.LazyLinear(8)` 只知道输出大小；它的权重还不可能有形状，所以一开始是一个 `UninitializedParameter`。第一次前向传播看到输入后，会用默认初始化创建权重和偏置，并把这一层变成普通的 `Linear`（PyTorch 正是这样做的；D2L 的“构建块”一章通篇使用它）。

# %% [markdown] en="ff822963"
# 在那之前，任何需要参数值或形状的操作都会被拒绝，报错信息会告诉你该怎么做：读取形状、数参数个数、初始化器、保存。

# %% [markdown] en="f066019c"
# 所以，在用自己的方式初始化一个延迟网络（像上面那样用 `apply`）**之前**，也在创建它的优化器之前，先让一个批量通过它：PyTorch 的文档规定的就是这个顺序（先“试运行”，再建优化器）。在 dltutor 中，参数被创建时会保持自己的身份，所以在第一个批量之前建好的优化器仍会更新它们。在 PyTorch 2.13 中，`SGD` 和 `Adam` 也能这样用，但 `Adagrad` 在构造函数里就要读取每个参数，遇到未初始化的参数会抛出 `ValueError`；按文档的顺序做才稳妥。把状态字典加载到延迟网络中会按加载的形状创建参数（PyTorch 也是如此）。有一点要注意，PyTorch 也一样：延迟层在第一个批量时才抽取随机值，晚于所有普通层，所以同一个种子下，带延迟层的网络与完整写出来的同一个网络的初始值不同。

# %% [markdown] en="e0dd6c70"
# ## 为什么初始化很重要
#
# 这里是上面每个公式背后的道理。Linear 层把 `fan_in` 个乘积加起来，所以（对于相互独立、均值为零的值）
#
# $$\mathrm{Var}(\text{output}) = \text{fan}_\text{in}\cdot\mathrm{Var}(w)\cdot
# \mathbb{E}[\text{input}^2].$$
#
# 要让信号以同样的大小传下去，$\mathrm{Var}(w)$ 必须约为 $1/\text{fan}_\text{in}$，再乘上一个修正激活函数影响的系数——**增益**（gain）。ReLU 把一半输入清零，使 $\mathbb{E}[x^2]$ 减半，所以 ReLU 层需要两倍的方差：增益 $\sqrt 2$（Kaiming/He）。tanh 会压缩大的值；它的增益是 $5/3$。Xavier（Glorot）使用 `fan_in` 和 `fan_out` 的平均值，这个折中也让反向传播（其中扇入和扇出的角色互换）保持在合适的范围内。`init.calculate_gain` 中有这张表（数值与 PyTorch 的 `nn.init.calculate_gain` 相同）：

# %% [markdown] en="23fcc873"
# 现在做实验。一个由 15 个块组成的网络，每个块是一个宽度为 64 的 Linear 层加一个激活函数，输入是一个 128 个样本、标准差为 1 的批量。对每个块我们测量
#
# * 前向传播时它的**输出**的标准差，以及
# * 反向传播时相对于这个输出的**梯度**的标准差，从顶端标准差为 1 的梯度开始（损失是输出乘以一个固定的随机张量）。
#
# `plot.layer_statistics` 在每个块上挂钩子（hook）来运行网络，并为每个初始化器画一条线；好的初始化器让两条线都保持平坦。
#
# 我们用 **float64** 测量（`net.double()`，与 PyTorch 相同；输入也是 float64）。训练会用 float32，但测量结果应该在每台计算机上给出相同的数字，而在 float32 中其中一个数做不到：一旦 `|x| > 9`，float32 中的 `tanh(x)` 就恰好等于 ±1，而在比这稍小的地方，它的斜率 `1 - tanh(x)**2` 只剩下几位有效数字。在以标准差 1 初始化的 tanh 网络中，大多数单元都处在那里，所以流经它们的梯度大部分是舍入噪声，在矩阵运算舍入方式不同的 CPU 上，它的标准差会相差约 10%。float64 把这种噪声压到远低于这里打印的三位数字。

# %% [markdown] en="1132dde0"
# 图中说明了什么（下面逐条检查）：
#
# * **标准差 0.01——消失。** 每一层把信号乘以约 $0.01\sqrt{64} = 0.08$。经过 15 层，前向和反向都什么也不剩：最前面的几层基本得不到梯度，无法学习。
# * **标准差 1——爆炸或饱和。** 每一层把信号乘以约 $\sqrt{64} = 8$（经过把一半值清零的 ReLU 后约为 $\sqrt{32} \approx 5.7$）。在 ReLU 网络中，激活值无限增长。在 tanh 网络中它们不能（tanh 保持在 ±1 之内），所以单元**饱和**：大多数输出停在 ±1。而在反向传播中，大的权重让梯度朝第一层增长几个数量级。
# * **tanh 用 Xavier，ReLU 用 Kaiming——稳定。** 从第一个块到最后一个块，两条线都只在一个很小的倍数内变化。
# * **增益不对也不行。** 不带 ReLU 增益的 Xavier 每经过一个 ReLU 层就损失 $\sqrt 2$ 倍；默认的 $U(\pm 1/\sqrt{\text{fan}_\text{in}})$ 方差只有 $1/(3\,\text{fan}_\text{in})$，让 tanh 网络的梯度衰减三个数量级。

# %% [markdown] en="4d9a2fc6"
# 一次抽取的权重和输入可能只是运气好。同样的结论在其他种子（其他权重、其他输入）下也成立；这些运行的图在屏幕外绘制后就扔掉了：

# %% [markdown] en="a57ead0a"
# **在 PyTorch 中做同样的测量。** `plot.layer_statistics` 是本套件的工具（它调用 `dltutor.stats.activation_stats` 和 `gradient_stats`）。它的核心是在每个块上挂一个前向钩子，记下该块输出的标准差；这几行代码把 `dt` 换成 `torch` 就能原样在 PyTorch 中运行（`correction=0` 表示除以 n，与本套件的统计相同）：

# %% [markdown] en="80b11953"
# 最后两点说明。第一，这些结论说的是训练的**开始**；归一化层（BatchNorm、LayerNorm）和残差连接会让深层网络对它不那么敏感——那是另一个话题。第二，Linear 层的默认初始化对这些笔记本中的浅层网络已经足够，但对于很深的堆叠，请选择与激活函数匹配的初始化器。
#
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | Linear 的默认初始化 | U(±1/sqrt(fan_in))，权重和偏置 | 相同 | 权重 Xavier 均匀分布，偏置为零 | 权重 N(0, 1/fan_in)，偏置为零 |
# | 访问每一层 | `net.apply(fn)` | `net.apply(fn)` | `net.apply(fn)` | `net.apply(fn)` |
# | 正态 / 均匀 / 常数 | `init.normal_`、`init.uniform_`、`init.constant_`（对象：`init.Normal`、`init.Uniform`、`init.Constant`） | `nn.init.normal_`、`uniform_`、`constant_` | `nn.initializer.Normal`、`Uniform`、`Constant` | `module.init.normal_`、`uniform_`、`fill_` |
# | Xavier（Glorot） | `init.xavier_uniform_`、`init.xavier_normal_`（对象：`init.XavierUniform`、`init.XavierNormal`） | `nn.init.xavier_uniform_`、`xavier_normal_` | `nn.initializer.XavierUniform`、`XavierNormal` | `module.init.xavier_uniform_`、`xavier_normal_` |
# | Kaiming（He） | `init.kaiming_uniform_`、`init.kaiming_normal_`（对象：`init.KaimingUniform`、`init.KaimingNormal`） | `nn.init.kaiming_uniform_`、`kaiming_normal_` | `nn.initializer.KaimingUniform`、`KaimingNormal` | `module.init.msra_uniform_`、`msra_normal_` |
# | 激活函数的增益 | `init.calculate_gain` | `nn.init.calculate_gain` | `nn.initializer.calculate_gain` | `module.init.calculate_gain` |
# | 复制一个数组进去 | `p.set_value(a)`、`init.assign_(p, a)` | `with torch.no_grad(): p.copy_(torch.from_numpy(a))` | `p.set_value(a)`、`nn.initializer.Assign(a)` | `p._reset(mge.tensor(a))`（它的 `init` 函数就是这样做的） |
# | 修改某些元素 | `with dt.no_grad(): p[0, 0] = 42` | `with torch.no_grad(): p[0, 0] = 42` | `p.set_value(...)` | — |
# | 预训练的嵌入 | `nn.Embedding.from_pretrained(a)`（冻结）、`nn.Embedding(n, d, weight_init=init.Assign(a))` | `nn.Embedding.from_pretrained(t)`（冻结） | `nn.Embedding(..., weight_attr=ParamAttr(initializer=Assign(a)))` | `M.Embedding.from_pretrained(t)`（冻结） |
# | 给某一层指定初始化器 | `nn.Linear(4, 8, weight_init=init.Normal(0.0, 0.02))` | 创建后 `init.normal_(layer.weight, 0.0, 0.02)` | `nn.Linear(4, 8, weight_attr=ParamAttr(initializer=Normal(0.0, 0.02)))` | 创建后 `M.init.normal_(layer.weight, 0, 0.02)` |
# | 逐参数学习率 | `p.lr_mult = 2.0` | 一个有自己 `lr` 的参数组 | `ParamAttr(learning_rate=2.0)`（扁平的参数列表） | 一个有自己 `lr` 的参数组 |
# | Linear 权重的布局 | `(out, in)` | `(out, in)` | `(in, out)` | `(out, in)` |
# | 由第一个批量决定输入大小 | `nn.LazyLinear(out)`、`nn.LazyConv2d(out, k)` | `nn.LazyLinear(out)`、`nn.LazyConv2d(out, k)` | —（给出 `in_features`） | —（给出 `in_features`） |
#
# 在 Paddle 中，初始化器是一个对象，在创建层时通过 `weight_attr=ParamAttr(initializer=...)` 交给它；把它用在已有的参数上也可以（`Normal(0.0, 0.01)(layer.weight)`）。PyTorch 和 MegEngine 用的是原地修改已有张量的函数，这些章节也一样。dltutor 也有 Paddle 的这些对象，所以给某一层指定自己的初始化器、或者加载词向量的 Paddle 代码，都可以逐行翻译过来；每个对象都调用同名的函数：

# %% [markdown] en="fa98f055"
# ## 小结
#
# **两句话：**初始化器原地改变参数中的数，从不替换优化器和每处绑定所持有的那个对象。这些数的尺度决定信号和梯度能否穿过一个很深的网络：tanh 用 Xavier，ReLU 用 Kaiming。
#
# * Linear 层从 $\pm 1/\sqrt{\text{fan}_\text{in}}$ 上的均匀分布开始（权重和偏置），这让一层输出的尺度与它的宽度无关。
# * `net.apply(fn)` 对每个模块运行 `fn`；在 `fn` 中检查类型。把它作用于网络的一部分（`net[0].apply(...)`），或按名字挑选参数，就可以区别对待不同的块。
# * 自定义初始化器：先用内置的抽取，再在 `dt.no_grad()` 中原地修改；或者用 NumPy 算出来再 `init.assign_`。
# * 原地修改值（`set_value`、在 `no_grad` 中索引赋值），不要赋一个新的 Parameter：优化器和参数共享持有的是对象。
# * `nn.LazyLinear(out)` 从第一个批量得到输入大小：在读取、初始化或保存它的参数之前，先运行一个批量。
# * 预训练向量：`nn.Embedding.from_pretrained(array)`（默认冻结），或用 `set_value` 写进已有的表；形状必须一致。
# * Paddle 的 `ParamAttr` 设置在这里都是属性：初始化器用 `init.*`，以及 `lr_mult`、`regularizer`、`need_clip`、`requires_grad`。
# * 在深层网络中，初始值的尺度决定了信号和梯度能否存活：tanh 用增益 5/3 的 Xavier，ReLU 用 Kaiming。
#
# ## 练习
#
# 每道练习都有一个供你作答的单元格：把 `____` 换成你的答案，运行这个单元格，最后一行会检查它。`ex.q1.hint()` 给出一条提示（再调用一次给出下一条），`ex.q1.solution()` 显示一种答案，`exercises.progress()` 列出每道练习的完成情况。

# %% [markdown] en="38023f73"
# **1.** 创建一个 `nn.Conv2d(3, 16, kernel_size=5)`。默认初始化把它的权重放在哪个边界 $b$ 之内（$\pm b$）？把 $b$ 放进 `conv_bound`，并与这一层核对。

# %% [markdown] en="e13ea831"
# **2.** 写一个初始化器 `identity_init(m)`，让一个方形的 Linear 层以恒等映射开始：这一层返回它的输入。

# %% [markdown] en="d3ad9d5a"
# **3.** Xavier 用于 tanh 时需要多大的增益（`tanh_gain`），为什么它大于 1？在深层网络实验中也试试 `nn.Sigmoid`：为什么 sigmoid 更难？*（它的输出不以零为中心，而且在 0 处的斜率是 1/4。）*

# %% [markdown] en="7b12a4a5"
# **4.** 用 `nn.Embedding.from_pretrained(vectors, freeze=False)` 加载六个词向量，对 `table(dt.tensor([0, 2])).sum()` 做一步 SGD，列出发生变化的行（`changed_rows`）。

# %% [markdown] en="77305c86"
# **5.** （不检查：一个实验。）在 `dltutor.data.make_moons` 上训练这个 15 个块的 tanh 网络（加一个 2 -> 64 的第一层和一个 64 -> 2 的最后一层）100 步，一次用标准差 0.01，一次用 Xavier，比较两条损失曲线。*提示：用一个列表记下 `loss.item()`。*
