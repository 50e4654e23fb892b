# %% [markdown] en="c386937a"
# # 在 GPU 上运行
#
# **约 30 分钟**。学完本章，你将能够：
#
# * 写出一个训练循环，有 GPU 时在 GPU 上运行，没有时在 CPU 上运行；
# * 从报错看出缺的是 CuPy 还是 GPU，以及该怎么办；
# * 根据参数、梯度、优化器状态和激活值估算一个训练步的内存，并用掩码和分桶减少变长 id 的填充；
# * 用更小的批量或梯度累积、`no_grad`、只保留数值而不保留张量，让一个训练步装得下；
# * 说出混合精度（mixed precision）、激活值重计算（activation checkpointing）和分配器设置各自换来什么、付出什么。
#
# GPU 计算网络中的大型矩阵乘法比 CPU 快许多倍，但它带来了两个新问题：怎样把代码和模型放到 GPU 上（而不必把代码写两遍），以及它的内存（显存，比计算机的内存小）不够时怎么办？
#
# dltutor 在 CPU 上用 NumPy 计算，在 GPU 上用 [CuPy](https://cupy.dev)——NumPy 在 NVIDIA GPU 上的孪生兄弟——计算；其余都是同一份代码。这个笔记本可以在任何机器上运行：没有 GPU 时（比如测试它的那台机器），它展示的就是你这时会看到的情况，而关于内存的一切都在 CPU 上证明，那里的算术是一样的。
#
# 手边没有 GPU 时，国内的学习者常用提供免费 GPU 额度的在线笔记本，例如百度的 AI Studio（[aistudio.baidu.com](https://aistudio.baidu.com)）：在那里先用 `nvidia-smi` 查看 CUDA 版本，再装上对应的 CuPy（`pip install cupy-cuda12x` 或 `cupy-cuda11x`），就能在真正的 GPU 上运行本章。

# %% [markdown] en="998bd705"
# ## 同一份代码在 GPU 上运行
#
# ### 后端：由谁来计算
#
# 每个张量都保存着某个后端的数组：一个 NumPy 数组（`device == "cpu"`）或一个 CuPy 数组（`device == "gpu"`）。`dt.backend.current()` 是新张量所在的后端，`dt.backend.use(name)` 切换它，可以永久切换（直接调用），也可以只在一个代码块中切换（`with`）。`"cpu"` 和 `"numpy"` 指的是同一个后端，`"gpu"`、`"cuda"` 和 `"cupy"` 也一样。

# %% [markdown] en="dc8271a7"
# 有三个调用负责搬移数据：
#
# * `dt.backend.use("gpu")`：从现在起创建的张量（`dt.randn`、`dt.tensor`、`DataLoader` 给出的批量、`dt.load`）都创建在 GPU 上；
# * `tensor.to("gpu")`：在 GPU 上得到一个张量的副本（梯度会沿着这次移动流回来）；`tensor.to("cpu")` 或 `tensor.numpy()` 把值取回来；
# * `model.to("gpu")`：把模型的每个参数和缓冲区**原地**移动：Parameter 对象保持不变，只有它们的数组被移动。
#
# GPU 只能计算它自己内存中的数组：把模型和每个批量放在同一个设备上。
#
# ### 这里有 GPU 吗？
#
# `dt.backend.gpu_available()` 回答这个问题而不会报错：当 CuPy 能够导入并看到 GPU 时为 True。与设备无关的代码只问一次，然后处处使用这个答案。大多数 PyTorch 教程的第一行正是这样做的，把 `torch` 换成 `dt` 就能在这里运行：`dt.cuda.is_available()` 问的是同一个问题，`dt.device("cuda")` 指的是 GPU（`"cuda:0"` 和本套件自己的 `"gpu"` 也可以；dltutor 只用一块 GPU）。凡是接受设备的地方都接受它：`model.to(device)`、`x.to(device)`、`dt.zeros(3, device=device)`、`dt.load(path, map_location=device)`。有一点不同：这里张量的 `.device` 是设备名（`"cpu"` 或 `"gpu"`），`dt.device` 与它的名字相等；而 PyTorch 的 `t.device` 是一个 `torch.device`，永远不等于字符串。（下一个单元格的输出取决于你的机器，所以测试不比较它。）

# %% [markdown] en="d27a3652"
# 这样整个训练循环只需写一次。模型在创建优化器之前移动（PyTorch 也推荐这个顺序）：优化器的动量（momentum）和 Adam 的矩在之后创建，就在参数旁边，在同一个设备上。每个批量都用 `.to(device)` 移动，它已经在那里时什么也不做。

# %% [markdown] en="6bcbe8e5"
# ### 缺少 CuPy 或 GPU 时
#
# 在无法使用 GPU 的地方请求 GPU，会抛出 `dt.backend.GPUUnavailableError`，报错信息会说明缺少什么以及该怎么做。有三种情况：
#
# | 缺少什么 | 报错信息说 | 解决办法 |
# | --- | --- | --- |
# | 没有安装 CuPy | "The GPU backend needs CuPy, which is not installed ..." | `pip install cupy-cuda12x`（适用于 CUDA 12 的 CuPy；CUDA 13 用 `cupy-cuda13x`） |
# | 安装了 CuPy，但 CUDA 驱动不工作 | "CuPy is installed but no usable GPU was found ..." | 检查 `nvidia-smi`；安装或更新 NVIDIA 驱动 |
# | 安装了 CuPy，但机器上没有 GPU | "CuPy is installed but the machine has no GPU ..." | 换一台有 NVIDIA GPU 的机器 |
#
# 每条信息最后都建议用 `dt.backend.use('numpy')` 继续使用 CPU。三种请求 GPU 的方式都会给出同样的错误，而且失败的请求什么都不改变：后端仍是 CPU，移动失败的模型完整地留在原处。
#
# 下一个单元格用三种方式请求 GPU。在有 GPU 的机器上请求会成功，打印的内容也不同，所以测试不比较它的输出；它后面的单元格在两种机器上都会检查这些结论。

# %% [markdown] en="4a5b5263"
# ### GPU 有多忙
#
# 在程序训练时，从另一个终端观察它：`nvidia-smi` 显示每块 GPU 已用的显存和它的 `GPU-Util`。小模型的这个数偏低，原因有两个。每个运算都是一个内核（kernel），由主机（即 CPU，host）上的 Python 一个接一个地启动；对 64×64 的矩阵来说，一个内核在下一个启动之前就已经算完，GPU 只好等着 Python。另外，主循环在 CPU 上准备下一个批量的时候，GPU 无事可做：让批量在后台加载（第 10 章的 `num_workers`）。更大的批量让每次启动多做一些计算。练习 4 让你亲眼看到这一点。

# %% [markdown] en="3fbc2b20"
# ### 深入一步：GPU-Util 量的是什么
#
# 这个利用率数字算的是什么，不算什么。

# %% [markdown] en="bbe463e7"
# `nvidia-smi dmon` 每秒打印一行，其中 `sm` 一列就是这个利用率。NVIDIA 的手册（`man nvidia-smi`）把它定义为：在最近一个采样周期里，至少有一个内核在运行的时间所占的百分比。所以它只说明 GPU 一直没闲着，并不说明它算了多少。

# %% [markdown] en="85d0496b"
# ### 深入一步：一个训练步不在主机上读任何值
#
# 在主机上读一个值（`float(x)`、`print(loss)`、`if x.any():`）会让 Python 一直等到 GPU 做完排在它前面的所有工作；Python 等着的时候不会排入新的工作，于是接下来换成 GPU 等 Python。所以在 GPU 上，dltutor 的训练步不读任何值：前向、损失、反向传播（backpropagation），以及带裁剪、学习率倍数（learning-rate multiplier）和非有限值检查的 `opt.step()`，都只是排入内核。有两项检查需要一个值，它们都改在 GPU 上判定：
#
# * **梯度中有 NaN 或 Inf**：这一步在 GPU 上算出是否每个梯度都是有限的，照常执行更新；如果不是，就把它改过的每个值（参数、动量缓冲、Adam 的矩估计）都放回原样。答案在 GPU 继续工作的同时传回主机，在主机反正要读值的下一个时刻被读取：打印损失时，或下一次 `step()` 时。这时才抛出 `NonFiniteGradientError`，指出是哪个参数，并注明“found on the device, read after the step”（若用 `nonfinite="skip"`，则记入 `skipped_steps`）。参数和在 CPU 上完全一样（CPU 上先检查再更新）；只是报错晚了一次读取。
# * `cross_entropy` 中**超出范围的标签**：它所在的那一行让损失和每个梯度都变成 NaN，于是上面那一步被拒绝，指出该标签的 `ValueError` 在下一次读取时出现。
#
# 下面的单元格在这里、在 CPU 上走一遍这条 GPU 路径：它告诉 NumPy 后端“读值不是免费的”（CuPy 后端就是这样说的），然后在一个梯度里放进 NaN。

# %% [markdown] en="be3c91f8"
# ### 深入一步：每个参数一个内核
#
# 在 GPU 上，更新规则的每一行都是一次单独的内核启动：它从 GPU 显存读取整个数组，再把一个完整的临时数组写回去。带动量和权重衰减（weight decay）的 SGD 每个参数要启动好几次，Adam 更多。所以在 GPU 上，SGD、Adam 和 AdamW 把每个参数的一步做成**一个融合内核**（fused kernel）：公式不变，只是写成一个作用在数组上的函数（`dltutor/optim/sgd.py` 中的 `sgd_kernel`、`adam.py` 中的 `adam_kernel`，就在规则旁边），由 CuPy 用 `cupy.fuse` 编译，于是每个值只读一次，在寄存器里更新，再写一次。上面讲的非有限值检查也在这个内核里：被拒绝的一步把旧值写回去，所以更新前不用复制，更新后也不用放回。PyTorch 的 SGD、Adam 和 AdamW 用 `fused=True` 提供同样的做法。
#
# 内核就是一个普通的 Python 函数，所以在 CPU 上由 NumPy 逐行运行。下面的单元格在一个参数的数组上运行 SGD 的内核，再让优化器走 SGD 的一步，两者逐位相同（同样的运算，同样的顺序）。

# %% [markdown] en="27e3171b"
# ## GPU 显存不够时
#
# 在 GPU 上，“内存不足”意味着一个训练步的数组放不进 GPU 的显存（CuPy 会抛出 `cupy.cuda.memory.OutOfMemoryError`）。这些显存都用到哪里去了？用在四样东西上：
#
# 1. **参数**；
# 2. 它们的**梯度**（每个参数再加一个同样大小的数组）；
# 3. **优化器的状态**：普通 SGD 没有，动量有一份副本，Adam 有两份，即梯度及其平方的滑动平均（running average）；
# 4. **激活值**：前向传播为反向传播保留的每个中间结果。它们随批量大小增长，对于大的输入，它们是最大的一部分。
#
# ### 先估算一下
#
# 每个参数的数组都知道自己占多少字节：`p.data.nbytes`，即值的个数乘以每个值的字节数（float32 为 4）。对一个规模真实的模型把它们加起来，这里是一个处理 28×28 图像的 MLP：

# %% [markdown] en="cdbafb04"
# 现在在一次真实的 Adam 训练步上测量另外三部分。梯度占用的空间与参数一样多；Adam 的状态是它的两倍。对于激活值，在每一层上挂一个前向钩子，把输出的字节数加起来，分别测两种批量大小。

# %% [markdown] en="8c1bfd2f"
# 对于一个小 MLP，在批量较小时固定部分（参数、梯度、Adam 状态：参数的 4 倍）占主导，随着批量增大，激活值逐渐占了上风。下图用我们刚刚验证过的公式（每个样本的激活值 × 批量大小）把两者都画了出来。

# %% [markdown] en="0fe88b28"
# ### 变长 id 的掩码与分桶
#
# 一句话里的词、一个用户点过的商品：很多输入都是 id 序列，每条的长度各不相同。一个批量是一个数组，所以较短的序列要用一个保留的 id（这里是 0）补齐到最长那条的长度，这叫填充（padding）；再用一个掩码（mask）标出哪些位置是真实的 id（1），哪些是填充（0）。

# %% [markdown] en="cfc3b8f6"
# 一个小模型给每个 id 打标签：一个 `Embedding`（每个 id 占一行的表）加一个 `Linear` 层，要学的标签是 id 除以 5 的余数。损失只能计入真实的 id：把每个位置的损失乘以掩码，加起来，再除以真实 id 的个数。如果在填充后的数组上直接取平均，填充也被平均了进去，反向传播还会去训练表中填充 id 的那一行。下面从同一个起点比较三种损失：带掩码的、直接取平均的，以及只用真实 id、完全不填充的。

# %% [markdown] en="3aaa9566"
# 这两半都是现成的。`nn.Embedding(vocab, dim, padding_idx=0)` 让填充的那一行从零开始，而且永远得不到梯度，dltutor、PyTorch 和 Paddle 都是如此。`F.cross_entropy(logits, labels, ignore_index=-100)` 去掉标签为 -100（默认值）的位置；dltutor 和 PyTorch 接着只在其余位置上取平均，和掩码的做法一样（Paddle 不同：见这一部分末尾的“深入一步”）。在 dltutor 中，和 PyTorch 一样，把填充位置的标签设为 -100，掩码就替你做好了：

# %% [markdown] en="e616d0ad"
# 现在来看显存。嵌入层（embedding layer）的输出有“批量 × 最长长度 × 宽度”个浮点数，这个激活值随填充一起增长，它后面的每一层也一样。真实数据的长度分布是偏斜的：这里有 120 条 5 到 20 个 id 的短序列和 8 条 100 到 191 个 id 的长序列，按固定的到达顺序排列，每批 16 条。下面是四种分批方式，每种都用嵌入层输出的字节数来测量：
#
# * 每条序列都填充到全体中最长的长度（每一步的形状都相同）；
# * 每个批量填充到它自己最长的那条，按到达顺序分批；
# * 先按长度排序，让每个批量里都是长度相近的序列，这叫分桶（bucketing）；
# * 在分桶的基础上给每一步设一个**预算**：最多 320 个填充后的 id，即 16 × 20，正好一批短序列。于是许多短序列共用一步，一条长序列单独占一步。

# %% [markdown] en="2935a640"
# 分桶去掉了大部分填充，过一遍数据要存储和计算的量只剩原来的三分之一左右。但它没有降低**最大**的那一步：最长序列所在的批量仍然要把 16 行都填充到 191，而必须装得下的恰恰是最大的一步。给每一步设一个 id 的预算，就能给它封顶。这就是“变长 id 导致内存占用过大”的常见解法：序列长的地方用更小的批量，再把 id 按长度排序，让填充尽量少。还有两点要注意：每遍数据都要打乱批量的顺序（而不是批量里的内容），免得训练总是先看到短序列；掩码也要保留，因为同一个桶里较短的序列仍然有填充。

# %% [markdown] en="b177cafb"
# 所以，当显存不够时，按顺序：
#
# ### 1. 使用更小的批量
#
# 激活值会按比例缩小，上面的断言已经证明了这一点。这是首先要尝试的；代价是梯度的噪声更大，下一个技巧可以消除它。
#
# ### 2. 在微批量上累积梯度
#
# 在 `zero_grad()` 之前，多次调用 `backward()` 时梯度会相加。所以不用一个 32 的批量，而是运行四个 8 的微批量，对每个调用 `backward()`，然后只走一步。任何时刻都只有一个微批量的激活值活着。把每个损失乘以 1/4：损失是它那个批量上的平均值，而 32 个样本上的平均值就是四个 8 样本平均值的平均。

# %% [markdown] en="c5138fac"
# 有一点要注意：这只对独立处理各个样本的层是精确的。BatchNorm 在它看到的批量上计算统计量，所以用微批量时它看到的是 8 个样本的批量，而不是 32 个。
#
# ### 3. 在 `dt.no_grad()` 中评估
#
# 在训练之外你不需要梯度，所以没有理由记录计算图（computational graph），而记录计算图会让每个激活值在结果存在期间一直活着。在 `dt.no_grad()` 中，结果只是普通的值：没有 `grad_fn`，什么都不保留。

# %% [markdown] en="4a7a5555"
# ### 4. 保留数字而不是张量
#
# 一个仍带着计算图的损失张量会让计算图中的激活值一直活着，无论损失本身多小。改为收集 `loss.item()`（一个 Python 浮点数）。为了看到区别，用一个前向钩子对每个隐藏层激活值保留一个弱引用（它不会让对象继续活着），在 10 个批量的循环之后数一数还有多少个活着。

# %% [markdown] en="995848ca"
# 在循环中写 `total = total + loss` 也一样（这个总和会拖着每一步的计算图），把模型输出存进列表“以后再用”也一样：请保留 `.item()`、`.numpy()` 或 `.detach()`。
#
# ### 5. `del` 不再需要的东西
#
# 当指向一个数组的最后一个引用消失时，它就会被释放。被一个变量持有的大张量会一直存在，直到这个变量被重新赋值或删除；在笔记本中这可能是很长一段时间。

# %% [markdown] en="dfa2bb5f"
# ### 6. 半精度、重计算和内存分配器
#
# 还有三种节省要靠框架，每一种都有代价。**混合精度**用 16 位浮点数计算，激活值减半；这时小的梯度需要把损失放大才能保住。**激活值重计算**只保留部分层的输出，其余的在反向传播时重新计算：显存少得多，计算量大约多三分之一。当“内存不足”来自被切成碎块的空闲显存缓存时，**内存分配器**的设置能帮上忙。下面的“深入一步”逐一演示。

# %% [markdown] en="da214e21"
# ### 简而言之
#
# 当一个训练步放不下时：用更小的批量，并累积梯度以保持你想要的批量；在 `no_grad` 中评估、保留数字而不是张量、`del`；混合精度；然后是激活值重计算；当报错信息显示大量已保留但未分配的显存时，调整内存分配器的设置；最后，换一个更小的模型或显存更大的 GPU。

# %% [markdown] en="eeb3747e"
# ### 深入一步：不只是梯度相同，这一步也相同
#
# 上面累积出的梯度给出的，正是整个批量的那一步优化，连动量也一样。

# %% [markdown] en="9a8356ed"
# 这些梯度在 float32 舍入误差范围内一致（各项相加的顺序不同），所以优化器据此走的那一步也相同：

# %% [markdown] en="306d6c50"
# ### 深入一步：Paddle 的 ignore_index
#
# Paddle 3.3 的交叉熵怎样计入被忽略的位置，以及在那里该用什么标签。

# %% [markdown] en="b59a43c8"
# Paddle 3.3 只有在 `ignore_index` 不小于 0 时，才只在保留的位置上取平均：用它的默认值 -100 时，被忽略的位置给总和加的是 0，却仍然算在平均的分母里，于是损失和每个梯度都缩小为“真实 id 数 / 位置数”倍（上面填充的那个批量是 9/15）。在 Paddle 中，可以把填充的标签设为类别数，再把它作为 `ignore_index` 传进去。

# %% [markdown] en="336094a2"
# ### 深入一步：混合精度、激活值重计算和内存分配器
#
# 这三样各自怎样工作，大框架怎样称呼它们，以及在这里实测的算术。

# %% [markdown] en="2ba21957"
# **半精度的激活值：混合精度。** 一个 float16（或 bfloat16）值只占 2 个字节而不是 4 个，所以用半精度计算前向和反向传播，激活值就减半了。大框架会替你做：在 PyTorch 中把前向传播包在 `with torch.autocast("cuda", dtype=torch.float16):` 中，在 Paddle 中用 `with paddle.amp.auto_cast():`（在 GPU 上；在 CPU 上 Paddle 3.3 会警告它不起作用）。有两个细节让它可行。权重保留一份 float32 的**主副本**用于更新（在 float16 中，一个小的更新加到一个大的权重上会消失：在那里 1024 + 0.1 等于 1024）；在 PyTorch 的 autocast 下，参数本身就一直是 float32，每个运算按需转换。而且 float16 存不下非常小的数：它最小的正数是 2^-24，约 `6e-8`，比它的一半还小的数都会变成 0，所以小的梯度会丢失。**损失缩放**（loss scaling）在反向传播之前把损失（从而每个梯度）乘以一个大因子，并在更新之前用 float32 除回去：`torch.amp.GradScaler`、`paddle.amp.GradScaler`。PyTorch 2.13 的 `GradScaler` 从 2^16 = 65536 开始；当缩放后的梯度溢出（inf 或 nan）时，它跳过这一步并把缩放因子减半，连续 2000 步没有溢出后再把它加倍（Paddle 3.3 的 `GradScaler` 默认值相同）。（bfloat16 的范围与 float32 相同，不需要缩放。）dltutor 没有 autocast，但这两个事实很容易看到：

# %% [markdown] en="b82370ce"
# **重算而不存储：激活值重计算。** 反向传播需要前向传播的输出。不必全部保留，每隔几层只保留一个（PyTorch 把它们叫作 checkpoints），在反向传播时再把一段的前向传播运行一遍，把它的输出找回来。显存从每一层的输出降到这些保留的输出加上一段；代价是多一次前向传播（大约多三分之一的计算量）。PyTorch：`torch.utils.checkpoint.checkpoint(segment, x, use_reentrant=False)`（不写 `use_reentrant` 时 PyTorch 2.13 会发出警告）；Paddle：`paddle.distributed.fleet.utils.recompute(segment, x)`。两者得到的梯度都与全部保留时相同。下面在一个更深的 MLP（八对 Linear + ReLU，批量 128）实测的输出上算一算：

# %% [markdown] en="9564769f"
# **内存分配器。** 在 GPU 上释放数组时，中间还有一层：CuPy 把释放的内存块保留在一个内存池中以便快速复用，所以 `nvidia-smi` 仍把它们算作已使用。你自己的程序会复用它们；要把它们还给驱动（给别的程序用），调用 `cupy.get_default_memory_pool().free_all_blocks()`。
#
# 各框架把释放的 GPU 显存保留在缓存中以便复用（就像 CuPy 的内存池那样）。这样，“内存不足”可能来自碎片化：缓存被切成了太多小块，放不下下一个数组；PyTorch 的显存不足报错信息会说明有多少显存“已由 PyTorch 保留但未分配”（reserved by PyTorch but unallocated），并在这部分很大时建议采用下面的设置。PyTorch：在程序启动之前设置 `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`，让缓存块能够增长而不是被分割；`torch.cuda.memory_summary()` 会显示缓存。Paddle：`FLAGS_allocator_strategy=auto_growth`（它的默认值）按需分配显存，`FLAGS_fraction_of_gpu_memory_to_use` 设置旧策略一开始占用多少。CuPy：`cupy.get_default_memory_pool().set_limit(fraction=0.5)` 给内存池设上限。清空缓存（`torch.cuda.empty_cache()`、`free_all_blocks()`）把显存交还给其他程序；它不会让你自己的程序多出任何显存（PyTorch 关于 `empty_cache` 的文档就是这么说的）。

# %% [markdown] en="85bf313c"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 有 GPU 吗？ | `dt.backend.gpu_available()` | `torch.cuda.is_available()` | `paddle.device.cuda.device_count() > 0` | `megengine.is_cuda_available()` |
# | 从现在起在 GPU 上计算 | `dt.backend.use("gpu")` | `torch.set_default_device("cuda")` | `paddle.set_device("gpu")` | `megengine.set_default_device("gpu0")` |
# | 只在一个代码块中 | `with dt.backend.use("gpu"):` | `with torch.device("cuda"):` | `with paddle.device.device_guard("gpu"):` | — |
# | 移动模型 | `model.to("gpu")` | `model.to("cuda")` | `model.to("gpu")` | —（在 `set_default_device` 之后构建它） |
# | 移动张量 | `t.to("gpu")` | `t.to("cuda")` | `t.cuda()` | `t.to("gpu0")` |
# | 在哪个设备上 | `t.device` | `t.device` | `t.place` | `t.device` |
# | 没有 GPU 时得到什么 | 指出缺少什么的 `GPUUnavailableError` | `AssertionError`（“Torch not compiled with CUDA enabled”）或 `RuntimeError` | `paddle.set_device` 抛出的 `ValueError` | 一个运行时错误 |
# | 不建计算图地评估 | `with dt.no_grad():` | `with torch.no_grad():` | `with paddle.no_grad():` | —（在 `GradManager` 之外什么都不记录） |
# | 累积梯度 | 每个微批量调用 `backward()`，一次 `step()` | 相同 | 相同 | 每个微批量调用 `gm.backward()`，一次 `step()` |
# | 释放显存缓存 | `cupy.get_default_memory_pool().free_all_blocks()` | `torch.cuda.empty_cache()` | `paddle.device.cuda.empty_cache()` | `megengine.coalesce_free_memory()` |
#
# ## 小结
#
# **两句话**：只要模型和每个批量都放在选定的那个设备上，同一份代码就能在两种设备上运行。一步训练的显存由参数、梯度、优化器状态和激活值组成，要缩减时先缩减激活值。
#
# * 后端决定由谁计算：CPU 上是 NumPy，GPU 上是 CuPy。`dt.backend.use("gpu")`（一次调用或一个 `with` 代码块）、`tensor.to("gpu")` 和 `model.to("gpu")` 把工作移到 GPU 上；写一次 `device = "gpu" if dt.backend.gpu_available() else "cpu"`，同一份代码就能在任何地方运行。
# * 没有 CuPy 或 GPU 时，你会得到一个 `GPUUnavailableError`，它说明缺少的是哪一个以及怎样解决（`pip install cupy-cuda12x`），而且什么都没有改变。
# * 一个训练步的显存 = 参数 + 梯度（再来一份同样大小的）+ 优化器状态（Adam：再来两份）+ 激活值（与批量大小成正比）。用 `p.data.nbytes` 来估算。
# * 显存不够：更小的批量；梯度累积（损失 / k，每个微批量调用 `backward()`，一次 `step()`：梯度相同）；评估时用 `dt.no_grad()`；保留 `loss.item()` 而不是损失；`del` 大张量。
# * 变长 id：用掩码（或 `ignore_index=-100`）把填充挡在损失之外，按长度分桶以减少填充，再给每一步的 id 个数设上限，为最大的一步封顶。
#
# ## 练习
#
# 每道练习都有一个供你作答的单元格：把 `____` 换成你的答案，运行这个单元格，最后一行会检查它。`ex.q1.hint()` 给出一条提示（再调用一次给出下一条），`ex.q1.solution()` 显示一种答案，`exercises.progress()` 列出每道练习的完成情况。

# %% [markdown] en="b9adb34c"
# **1.** 写出 `step_memory_mb(model, batch_size, optimizer="adam")`，根据四个部分计算一个训练步的显存（单位 MB；`optimizer` 是 `"sgd"`、`"momentum"` 或 `"adam"`）。检查会在 784-512-512-10 的 MLP 上用几种批量大小和优化器调用它。1 GB 能放下多大的批量？

# %% [markdown] en="3110fa2a"
# **2.** 在大小不等的微批量上累积，20 + 12 个样本，使梯度等于整个 32 样本批量的梯度。两个平均损失各应乘以什么因子？把它们放进 `factors`（一个二元组），并用上面的累积代码检查。

# %% [markdown] en="eefb20c3"
# **3.** 运行 `activations_alive` 实验，这次保留 `loss.detach()`。有多少个激活值还活着（`alive_detached`）？再量一量保留整个 `loss` 的代价：它留住的那些激活值一共占多少字节（`kept_bytes`）？每个激活值是 `net[1]` 对一个批量的输出，它的 `.data.nbytes` 就是它的大小。

# %% [markdown] en="afcf5c6b"
# **4.** （不检查：需要 GPU。）如果你有 NVIDIA GPU，执行 `pip install cupy-cuda12x`，重新运行本章，检查参数报告 `device == "gpu"`。然后分别在两种设备上为螺旋模型的一轮（epoch）计时。为什么对这么小的模型，GPU 几乎不快？提示：每个运算都要启动一个 GPU 内核，对于 64 × 64 的矩阵，启动内核的开销比算术本身还大。
