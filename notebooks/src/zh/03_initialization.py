# %% [markdown] en="bbfd9086"
# # 参数初始化
#
# **约 30 分钟**。学完本章，你将能够：
#
# * 说出 Linear 层的初始值是什么，以及为什么它的范围随输入个数的增加而缩小；
# * 用 `net.apply` 和内置的初始化器初始化每一层，或者让每个块各用各的方式；
# * 写出原地修改参数值的自定义初始化器；
# * 选出能让信号和梯度穿过深层网络而不消失的初始化器。
#
# 在第一个训练步之前，每个权重都需要一个值，而且取什么值很重要：深层网络的初始值太小，信号经过几层就消失了；太大，信号就会爆炸，或者激活值饱和。无论哪种情况，训练还没开始就停滞了。本章先回答关于初始化（initialization）的实际问题，最后在一个 15 层的网络中逐层测量，说明这个选择为什么重要。把已有的值放进参数（预训练词向量、来自 NumPy 的权重矩阵）是第 4 章的内容。
#
# 这里的一切都是**原地**进行的：初始化器（initializer）改变参数里面的数，而参数对象本身保持不变。第 4 章会说明这个细节为什么重要。

# %% [markdown] en="d8e15909"
# ## Linear 层的默认初始化
#
# 新建的 `nn.Linear(in_features, out_features)` 会从下面的区间中均匀地抽取每个权重**和**每个偏置：
#
# $$\left[-\frac{1}{\sqrt{\text{fan}_\text{in}}},\ \frac{1}{\sqrt{\text{fan}_\text{in}}}\right],$$
#
# 其中 $\text{fan}_\text{in}$（代码里写作 `fan_in`）就是 `in_features`，即输入到每个输出的输入个数。这是 PyTorch 的默认做法，dltutor 照搬了它（PyTorch 的代码怎样得出这个边界，见“为什么初始化很重要”一节末尾的深入一步）。用一个很宽的层可以清楚地看到这个范围：有 1000 个输入时，边界是 $1/\sqrt{1000} \approx 0.0316$。

# %% [markdown] en="4278ce6d"
# **为什么要除以 $\sqrt{\text{fan}_\text{in}}$**？每个输出要把 `fan_in` 个乘积 $w_i x_i$ 加起来。如果输入的方差是 1，和的方差就是 $\text{fan}_\text{in}\cdot\mathrm{Var}(w)$。取 $\mathrm{Var}(w) = \text{bound}^2/3 = 1/(3\,\text{fan}_\text{in})$，它就是 $1/3$，与宽度无关（再加上偏置贡献的 $1/(3\,\text{fan}_\text{in})$，只对很窄的层有影响）：输出的离散程度不再取决于这一层有多少个输入。像 $U(-0.1, 0.1)$ 这样的固定范围就没有这个性质——它的输出会像 $\sqrt{\text{fan}_\text{in}}$ 那样增长。两者都测一下：

# %% [markdown] en="24f5f03f"
# 一层能保持尺度稳定，但请注意这个值：约 0.58，而不是 1。把许多这样的层叠起来，信号在每一层都会缩小一点——最后一节会展示这对深层网络的影响。偏置从同一个范围中抽取（这是 PyTorch 的选择；很多人会像下一节那样把它设为零）。
#
# ## 对每个 Linear 层使用内置初始化器
#
# `init` 提供了常用的初始化器；每个都原地填充一个张量。要作用到网络的每一层，写一个接收**模块**的函数，如果模块是你想要的类型就初始化它，然后把函数交给 `net.apply(fn)`，它会对树中的每个模块调用 `fn`。这里：权重取自标准差为 0.01 的正态分布，偏置为零。

# %% [markdown] en="ccb7b100"
# `apply` 先访问子模块，最后才访问模块本身，所以 `fn` 会看到每一层，包括 ReLU 和 Sequential——这就是 `init_normal` 要检查类型的原因：

# %% [markdown] en="47a3646a"
# 把每个权重都设为同一个常数，做法相同：

# %% [markdown] en="6ab4912e"
# 所有权重都相等的网络是没法训练的：一层中的每个单元计算同样的东西、得到同样的梯度，所以无论训练多久它们都保持相同。在随机数据上做五十步 SGD 就能看出来：第一层的八个隐藏单元最后得到八行相等的权重（直到舍入误差的最后几位都相等）。常数初始化只适合偏置和这样的演示。顺带一提，`optim.SGD(params, lr)` 是普通的随机梯度下降：每次 `step()` 从它持有的每个参数中减去 lr × 梯度，`zero_grad()` 在下一次反向传播（backpropagation）之前清除梯度；第 6 章专门讲优化器。

# %% [markdown] en="e8c30519"
# ### 深入一步：PyTorch 中的 `.data` 写法
# 为什么 D2L 的 `m.weight.data.normal_(0, 0.01)` 在这里会出错，以及应该怎样写。

# %% [markdown] en="2938c10b"
# > **从 PyTorch 过来的读者注意：`.data` 就是数组本身**。D2L 和许多 PyTorch 教程写 `m.weight.data.normal_(0, 0.01)` 和 `m.bias.data.fill_(0)`。在 dltutor 中，`p.data` 是保存这些值的 NumPy（或 CuPy）数组，这样你总能看到原始的数；而 NumPy 数组没有 `normal_`、`fill_` 或 `abs()` 方法。对照如下：
# >
# > | PyTorch | dltutor |
# > | --- | --- |
# > | `m.weight.data.normal_(0, 0.01)` | `init.normal_(m.weight, 0, 0.01)` |
# > | `m.bias.data.fill_(0)` | `init.zeros_(m.bias)`（或 `init.constant_(m.bias, 0)`） |
# > | `with torch.no_grad(): m.weight.normal_(0, 0.01)` | `with dt.no_grad(): m.weight.normal_(0, 0.01)` |
# > | `m.weight.data.abs()` | `m.weight.abs()`（一个张量）或 `np.abs(m.weight.data)`（一个数组） |
# >
# > 张量方法 `normal_`、`uniform_`、`fill_` 和 `zero_` 也都有，并且和 PyTorch 一样，在 `no_grad` 之外它们会拒绝修改参数，否则自动微分（autograd）就无法知道它看到的是哪些值。

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
# Xavier 和 Kaiming 根据一个**矩阵**的扇入扇出计算范围，所以它们拒绝一维的偏置——报错信息会告诉你该用什么代替（它说的是：形状为 (8,) 的一维张量算不出扇入和扇出，扇入扇出只对权重矩阵和卷积核有定义；一维的偏置请用 `zeros_`、`constant_` 或 `uniform_`）：

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

# %% [markdown] en="debadb9d"
# ### 深入一步：Paddle 版 D2L
# 为什么它的初始化代码什么都没有改变；用 dltutor 中 Paddle 风格的初始化器对象来演示。

# %% [markdown] en="8d97eed8"
# **读过 Paddle 版 D2L 吗**？它在这一节的代码其实什么都没有初始化。在 Paddle 3.3 中，它的两个函数甚至会因 `TypeError` 而中断（`paddle.zeros(m.bias)`：参数不是形状；`m *= h`：float32 张量乘以布尔掩码）；即使把这两行改好，它们仍然什么都不会改变，原因有两个，在任何框架中都值得了解：
#
# * 单独一行 `paddle.nn.initializer.Normal(mean=0.0, std=0.01)` 只是创建了一个初始化器对象，随即把它扔掉了。初始化器只有在被用于某个参数（`Normal(0.0, 0.01)(m.weight)`）或交给某一层（`weight_attr=ParamAttr(initializer=...)`）时才会起作用。`paddle.zeros(...)` 同样只会创建一个新张量。（`XavierUniform(m.weight, -10, 10)` 甚至把权重当作 `fan_in`、把 -10 当作 `fan_out`、把 10 当作 `gain` 传了进去；dltutor 会拒绝，Paddle 3.3 则照样创建这个对象。）
# * `m = paddle.to_tensor(m.weight)` 之后再 `m *= h`，乘的是一个**副本**：名字 `m` 现在指向一个新张量，层的权重没有被动过。要修改参数本身：在 Paddle 中用 `m.weight.set_value(m.weight * h)`，在这里用 `no_grad()` 中的原地修改。
#
# dltutor 也有同样的初始化器对象（`init.Normal`、`init.Uniform` 等，参数与 Paddle 相同），所以这两个错误都可以在这里演示：

# %% [markdown] en="e0dd6c70"
# ## 为什么初始化很重要
#
# 下面说明上面各个公式背后的道理。Linear 层把 `fan_in` 个乘积加起来，所以（对于相互独立、均值为零的值）
#
# $$\mathrm{Var}(\text{output}) = \text{fan}_\text{in}\cdot\mathrm{Var}(w)\cdot
# \mathbb{E}[\text{input}^2].$$
#
# 要让信号以同样的大小传下去，$\mathrm{Var}(w)$ 必须约为 $1/\text{fan}_\text{in}$，再乘上一个修正激活函数影响的系数——**增益**（gain）。ReLU 把一半输入清零，使 $\mathbb{E}[x^2]$ 减半，所以 ReLU 层需要两倍的方差：增益 $\sqrt 2$（Kaiming/He）。tanh 会压缩大的值；它的增益是 $5/3$。Xavier 初始化使用 `fan_in` 和 `fan_out` 的平均值，这个折中也让反向传播（其中扇入和扇出的角色互换）保持在合适的范围内。`init.calculate_gain` 中有这张表（数值与 PyTorch 的 `nn.init.calculate_gain` 相同）：

# %% [markdown] en="1993bd2c"
# 现在做实验。一个由 15 个块组成的网络，每个块是一个宽度为 64 的 Linear 层加一个激活函数，输入是一个 128 个样本、标准差为 1 的批量。对每个块我们测量
#
# * 前向传播时它的**输出**的标准差，以及
# * 反向传播时相对于这个输出的**梯度**的标准差，从顶端标准差为 1 的梯度开始（损失是输出乘以一个固定的随机张量）。
#
# `plot.layer_statistics` 在每个块上挂钩子（hook）来运行网络，并为每个初始化器画一条线；好的初始化器让两条线都保持平坦。
#
# 我们用 **float64** 测量（`net.double()`，与 PyTorch 相同；输入也是 float64），这样打印出的数字在每台计算机上都相同（原因见下面的深入一步）。

# %% [markdown] en="1132dde0"
# 图中说明了什么（下面逐条检查）：
#
# * **标准差 0.01——消失**。每一层把信号乘以约 $0.01\sqrt{64} = 0.08$。经过 15 层，前向和反向都什么也不剩：最前面的几层基本得不到梯度，无法学习。
# * **标准差 1——爆炸或饱和**。每一层把信号乘以约 $\sqrt{64} = 8$（经过把一半值清零的 ReLU 后约为 $\sqrt{32} \approx 5.7$）。在 ReLU 网络中，激活值无限增长。在 tanh 网络中它们不能（tanh 保持在 ±1 之内），所以单元**饱和**：大多数输出停在 ±1。而在反向传播中，大的权重让梯度朝第一层增长几个数量级。
# * **tanh 用 Xavier，ReLU 用 Kaiming——稳定**。从第一个块到最后一个块，两条线都只在一个很小的倍数内变化。
# * **增益不对也不行**。不带 ReLU 增益的 Xavier 每经过一个 ReLU 层就损失 $\sqrt 2$ 倍；默认的 $U(\pm 1/\sqrt{\text{fan}_\text{in}})$ 方差只有 $1/(3\,\text{fan}_\text{in})$，让 tanh 网络的梯度衰减三个数量级。

# %% [markdown] en="3996aaf5"
# 最后两点说明。第一，这些结论说的是训练的**开始**；归一化层（BatchNorm、LayerNorm）和残差连接会让深层网络对它不那么敏感——那是另一个话题。第二，Linear 层的默认初始化对这些笔记本中的浅层网络已经足够，但对于很深的堆叠，请选择与激活函数匹配的初始化器。

# %% [markdown] en="66dad9d3"
# ### 深入一步：为什么用 float64 测量
# 如果用 float32，饱和的 tanh 网络打印出的数字会因计算机而异。

# %% [markdown] en="a2958888"
# 训练会用 float32，但测量结果应该在每台计算机上给出相同的数字，而在 float32 中其中一个数做不到：一旦 `|x| > 9`，float32 中的 `tanh(x)` 就恰好等于 ±1，而在比这稍小的地方，它的斜率 `1 - tanh(x)**2` 只剩下几位有效数字。在以标准差 1 初始化的 tanh 网络中，大多数单元都处在那里，所以流经它们的梯度大部分是舍入噪声，在矩阵运算舍入方式不同的 CPU 上，它的标准差会相差约 10%。float64 把这种噪声压到远低于这里打印的三位数字。

# %% [markdown] en="109f3b64"
# ### 深入一步：换几个种子，结论照样成立
# 用另外四个种子重做这个实验：第一次抽取并不是运气好。

# %% [markdown] en="4d9a2fc6"
# 一次抽取的权重和输入可能只是运气好。同样的结论在其他种子（其他权重、其他输入）下也成立；这些运行的图在屏幕外绘制后就扔掉了：

# %% [markdown] en="506fbfe0"
# ### 深入一步：在 PyTorch 中做同样的测量
# `plot.layer_statistics` 背后的前向钩子，这几行代码在 PyTorch 中可以原样运行。

# %% [markdown] en="a57ead0a"
# **在 PyTorch 中做同样的测量**。`plot.layer_statistics` 是本套件的工具（它调用 `dltutor.stats.activation_stats` 和 `gradient_stats`）。它的核心是在每个块上挂一个前向钩子，记下该块输出的标准差；这几行代码把 `dt` 换成 `torch` 就能原样在 PyTorch 中运行（`correction=0` 表示除以 n，与本套件的统计相同）：

# %% [markdown] en="1b55712a"
# ### 深入一步：PyTorch 的默认范围从哪里来
# 带 `a=math.sqrt(5)` 的 `kaiming_uniform_` 怎样得出第一节的边界 $1/\sqrt{\text{fan}_\text{in}}$。

# %% [markdown] en="bbe43e7b"
# **这个范围从哪里来**。PyTorch 并没有直接写出边界 $1/\sqrt{\text{fan}_\text{in}}$。它的 `Linear.reset_parameters` 调用 `kaiming_uniform_(weight, a=math.sqrt(5))`，也就是负斜率 $a=\sqrt 5$ 的 leaky ReLU 的 He 初始化器。这个初始化器从 $U(-\text{bound}, \text{bound})$ 中抽取，其中
#
# $$\text{bound} = \sqrt 3 \cdot \frac{\text{gain}}{\sqrt{\text{fan}_\text{in}}},\qquad
# \text{gain} = \sqrt{\frac{2}{1 + a^2}} = \sqrt{\frac{2}{6}} = \frac{1}{\sqrt 3},$$
#
# 两个 $\sqrt 3$ 相互抵消，于是 $\text{bound} = 1/\sqrt{\text{fan}_\text{in}}$。看起来奇怪的 $a=\sqrt 5$ 只是恰好让结果如此的那个数。dltutor 的层也做同样的调用，所以同一个种子给出的权重，与你自己调用这个初始化器得到的完全相同（`wide` 是第一节中那个有 1000 个输入的层）：

# %% [markdown] en="1ff01c1f"
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
# | 给某一层指定初始化器 | `nn.Linear(4, 8, weight_init=init.Normal(0.0, 0.02))` | 创建后 `init.normal_(layer.weight, 0.0, 0.02)` | `nn.Linear(4, 8, weight_attr=ParamAttr(initializer=Normal(0.0, 0.02)))` | 创建后 `M.init.normal_(layer.weight, 0, 0.02)` |

# %% [markdown] en="de48cef4"
# ### 深入一步：Paddle 的初始化器对象
# Paddle 怎样把初始化器交给一层，以及 dltutor 中同样的对象。

# %% [markdown] en="0744c5cf"
# 在 Paddle 中，初始化器是一个对象，在创建层时通过 `weight_attr=ParamAttr(initializer=...)` 交给它；把它用在已有的参数上也可以（`Normal(0.0, 0.01)(layer.weight)`）。PyTorch 和 MegEngine 用的是原地修改已有张量的函数，这些章节也一样。dltutor 也有 Paddle 的这些对象，所以给某一层指定自己的初始化器的 Paddle 代码可以逐行翻译过来；每个对象都调用同名的函数：

# %% [markdown] en="68190197"
# ## 小结
#
# **两句话**：初始化器原地改变参数中的数，从不替换优化器和每处绑定所持有的那个对象。这些数的尺度决定信号和梯度能否穿过一个很深的网络：tanh 用 Xavier，ReLU 用 Kaiming。
#
# * Linear 层从 $\pm 1/\sqrt{\text{fan}_\text{in}}$ 上的均匀分布开始（权重和偏置），这让一层输出的尺度与它的宽度无关。
# * `net.apply(fn)` 对每个模块运行 `fn`；在 `fn` 中检查类型。把它作用于网络的一部分（`net[0].apply(...)`），或按名字挑选参数，就可以区别对待不同的块。
# * 自定义初始化器：先用内置的抽取，再在 `dt.no_grad()` 中原地修改；或者用 NumPy 算出来再 `init.assign_`。
# * 初始化器对象（`init.Normal(0.0, 0.02)`，创建层时作为 `weight_init=` 传入）调用的是同样的函数。
# * 在深层网络中，初始值的尺度决定了信号和梯度能否存活：tanh 用增益 5/3 的 Xavier，ReLU 用 Kaiming。
#
# ## 练习
#
# 每道练习都有一个供你作答的单元格：把 `____` 换成你的答案，运行这个单元格，最后一行会检查它。`ex.q1.hint()` 给出一条提示（再调用一次给出下一条），`ex.q1.solution()` 显示一种答案，`exercises.progress()` 列出每道练习的完成情况。

# %% [markdown] en="38023f73"
# **1.** 创建一个 `nn.Conv2d(3, 16, kernel_size=5)`。默认初始化把它的权重放在哪个边界 $b$ 之内（$\pm b$）？把 $b$ 放进 `conv_bound`，并与这一层核对。

# %% [markdown] en="7a3cf1e5"
# **2.** 写一个初始化器 `identity_init(m)`，让一个方形的 Linear 层以恒等映射开始：这一层返回它的输入。`init.eye_(w)` 会把方形权重 `w` 原地填成单位矩阵（对角线上为 1，其余为 0），和其他 `init` 函数一样。检查时会在其他宽度的网络上把 `identity_init` 交给 `net.apply`，所以它会遇到树中的每一个模块，而不只是 Linear 层。

# %% [markdown] en="d3ad9d5a"
# **3.** Xavier 用于 tanh 时需要多大的增益（`tanh_gain`），为什么它大于 1？在深层网络实验中也试试 `nn.Sigmoid`：为什么 sigmoid 更难？（它的输出不以零为中心，而且在 0 处的斜率是 1/4。）

# %% [markdown] en="aa713eb6"
# **4.** （不检查：一个实验。）在 `dltutor.data.make_moons` 上训练这个 15 个块的 tanh 网络（加一个 2 -> 64 的第一层和一个 64 -> 2 的最后一层）100 步，一次用标准差 0.01，一次用 Xavier，比较两条损失曲线。提示：用一个列表记下 `loss.item()`。
