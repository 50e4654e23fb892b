# %% [markdown] en="ca3cc0c5"
# # 数据、检查点与恢复训练
#
# **约 30 分钟**。学完本章，你将能够：
#
# * 可复现地对数据集分批、打乱，不必对每个样本跑一次 Python 循环，即使数据比内存还大；
# * 在后台线程中加载接下来的批量，并说出这在什么时候能加快训练；
# * 把训练需要的一切存进一个检查点（checkpoint），并逐位相同地恢复训练；
# * 解释为什么 pickle 格式的检查点能运行代码，而 safetensors 文件不能；
# * 为预训练的主干网络换上新的输出层并加载它，再检查该填的参数是否都已填上。
#
# 每次训练都伴随着两件杂事。**给模型喂数据**：一个大数据集要以打乱的小批量（mini-batch）送进模型，而且要足够快，让模型永远不必等待。**停下来再重新开始**：长时间的训练总会被打断（笔记本电脑休眠了，课堂结束了），而恢复之后要像从未停下过一样，逐位相同地继续下去。
#
# 本章用 `dltutor.data`（仿照 PyTorch 设计的 `Dataset` 和 `DataLoader`）以及 `dt.save` / `dt.load`（检查点保存为 safetensors 文件）回答这两个问题。

# %% [markdown] en="53579651"
# ## 高效地读取大数据集
#
# ### 不用 Python 循环地分批
#
# 把数据放在 NumPy 数组里，每个样本占一行，再用 `TensorDataset` 包装起来。随后 `DataLoader` 把一轮（epoch）切成小批量。由于能看到整个数组，它只需对**每个数组做一次花式索引**（`X[indices]`）就能取出一个批量，这一步由 NumPy 在 C 代码中完成，而不必在 Python 中对每个样本调用一次 `dataset[i]`。

# %% [markdown] en="61f7dfd4"
# ### 可以复现的打乱
#
# 使用 `shuffle=True` 时，每一轮都以新的顺序访问样本。第 `e` 轮的顺序来自一个以 `(seed, e)` 为种子的生成器，所以同一个种子每次运行的结果都一样，每一轮与上一轮不同，每个样本在每一轮中恰好被访问一次。`loader.epoch` 说明下一个 `for` 循环将运行第几轮。

# %% [markdown] en="601702f1"
# 当批量大小不能整除数据集大小时，一轮的最后一个批量会小一些（10 = 4 + 4 + 2）。`drop_last=True` 会丢掉这个不完整的批量，适用于需要等大批量的模型（例如 BatchNorm 碰上只有 1 个样本的批量）。被丢掉的是这一轮打乱顺序后排在最后的那些样本，所以每一轮丢掉哪些样本随顺序而变。

# %% [markdown] en="66a4aaa5"
# ### 比内存还大的数据集
#
# `TensorDataset` 只要求数组能够索引。用 `np.save` 把一个大数组保存一次，再用 `np.load(..., mmap_mode="r")` 打开，操作系统只会从磁盘读取每个批量需要的那些行。得到的批量与从内存中的数组取出的完全相同。

# %% [markdown] en="edbb2249"
# ### 在后台加载：`num_workers`
#
# 当读取一个样本很慢时（要打开一个文件、解码一张图像、做数据增强），普通的循环会交替进行：加载一个批量，在上面训练，再加载下一个……设置 `num_workers=2` 后，两个后台线程会在模型训练当前批量的同时准备后面的批量。
#
# 下面是一个故意做得很慢的数据集：每个样本要花一毫秒，就像从磁盘读取一样。它会记下每个样本是哪个线程加载的，并在第二个批量的第一个样本（样本 16）加载完时设置一个标志。

# %% [markdown] en="db00f796"
# 工作线程改变的只是由谁读取样本，从不改变批量的内容。现在来看它们有什么用：取出第一个批量，在“训练”它的同时等待样本 16 的标志（最多等一秒）。没有工作线程时，没有谁提前读取，标志始终等不来；有工作线程时，标志早已设好。

# %% [markdown] en="1442b4b2"
# **线程什么时候有用**？同一时刻，Python 只运行一个线程的 Python 代码，这是全局解释器锁（GIL）的限制。线程在等待文件、休眠，或在 NumPy、BLAS、GPU 内核中计算时，会释放 GIL，于是加载和训练可以重叠。如果 `__getitem__` 是一个很长的**纯 Python** 循环，它会一直占着 GIL，工作线程几乎没有收益：把这些工作移进 NumPy（向量化），或者预先算好一次并保存结果。
#
# 下一个单元格分别在有、无工作线程时为一轮计时。计时结果因运行而异，也因机器而异，所以**测试不检查它的输出**（`nbval-ignore-output` 标签），保存的笔记本也不保留它的输出（`timing` 标签）：运行它，看看你的数字。

# %% [markdown] en="ac665a15"
# ### 用上 CPU 的每个核心
#
# 有三件事能让多核 CPU 上的训练更快，按效果从大到小排列：
#
# 1. **让 BLAS 使用这些核心**。训练步中占主要时间的矩阵乘法由 NumPy 附带的 BLAS 库（OpenBLAS 或 MKL）完成，这个库本来就会把每次乘法分到多个线程上。`OMP_NUM_THREADS`（或 `OPENBLAS_NUM_THREADS`、`MKL_NUM_THREADS`）设置线程数；NumPy 在导入时读取它，所以要在 `import numpy` 之前设置。
# 2. **使用更大的批量**。无论批量多大，每一步的 Python 开销都一样；更大的批量把更多工作交给 BLAS，而能随核心数扩展的正是 BLAS。这也会改变训练本身：你可能需要调整学习率（learning rate）。
# 3. **在后台加载**（`num_workers`）：读取数据很慢时使用。让工作线程加上 BLAS 线程的总数大约等于核心数：线程多于核心只会让它们轮流运行。

# %% [markdown] en="433d717a"
# ### 深入一步：加载器的内部
#
# 数一数加载器索引数组的次数，看看它对参数的严格检查、其他框架的工作进程，以及怎样在运行中的笔记本里控制 BLAS 线程。

# %% [markdown] en="a2dc2439"
# **每个批量只索引一次，数给你看**。为了亲眼看到加载器怎样读取数据，给它一个会统计自己被索引了多少次的数组（一个带计数 `__getitem__` 的 NumPy 子类）。200 个样本、每批 64 个，一轮是 4 个批量，数组被索引了 4 次：每个批量一次，而不是每个样本一次。

# %% [markdown] en="8d0fc5bf"
# **比 PyTorch 更严格**。`shuffle` 和 `drop_last` 必须是 `True` 或 `False`；最常见的问题来源是从配置文件读来的字符串 `"False"`。PyTorch 2.13 的 `DataLoader` 会拒绝 `drop_last="False"`（抛出 `ValueError`：“drop_last should be a boolean value”），对 `shuffle` 却只取它的真值，而非空字符串为真：`shuffle="False"` 反而会悄悄地打乱数据。Paddle 3.3 两者都拒绝（抛出 `AssertionError`）。dltutor 两者都拒绝，并说明原因。

# %% [markdown] en="abef8565"
# **PyTorch 和 Paddle 中的进程**。dltutor 使用线程，因为线程几乎立即就能启动，能在 Jupyter 中工作，并且与训练循环共享一切，包括数据集对象本身。PyTorch 和 Paddle 则启动进程（两者都用 `num_workers`），从而绕开了 GIL。批量并不是逐字节地经管道传过去的：工作进程把每个批量建在共享内存里，主进程直接映射这块内存（在 PyTorch 2.13 中，工作进程送来的批量 `is_shared()` 为真；在 Paddle 3.3 中，`use_shared_memory=True` 是 `DataLoader` 的默认值）。代价在别处：进程启动需要一段时间，而且每个工作进程读取的是它自己的那份数据集对象副本，所以工作进程的 `__getitem__` 往里写的任何东西（比如 `SlowDataset` 记下的读取线程）都到不了主进程。
#
# **在笔记本里控制 BLAS 线程**。NumPy 在导入时读取 `OMP_NUM_THREADS`；在运行中的笔记本里，`threadpoolctl`（随 scikit-learn 一起安装）可以显示这些库及其线程（`threadpool_info()`）并限制它们（`threadpool_limits`）。

# %% [markdown] en="69467f44"
# ## 保存检查点并精确地恢复
#
# 训练到第 *t* 步时，这次训练由哪些部分组成？不只是权重：
#
# | 部分 | 在哪里 | 忘了它会出什么问题 |
# | --- | --- | --- |
# | 权重 | `model.state_dict()` | 只能从头开始 |
# | 优化器的状态：动量缓冲区、Adam 的两个矩和步数、各组当前的 `lr` | `opt.state_dict()` | 恢复后走的每一步都不一样，学习率也回到代码中设置的值 |
# | 调度方案进行到了哪里 | `sched.state_dict()` | 调度方案从头开始：之后的学习率都不对 |
# | 数据流进行到了哪里：第几轮，也就决定了打乱顺序 | `loader.epoch` | 模型看到样本的顺序变了 |
#
# 把这一切放进一个字典，用 `dt.save` 保存。恢复时，完全像开始时那样构建全新的对象，再把每一部分加载进去。实验：先一口气训练若干轮；再训练其中一半，保存，扔掉一切，重新构建，加载，训练另一半，然后比较最终的权重。

# %% [markdown] en="73753a7a"
# 现在来做被打断的那次训练。先训练前一半，然后保存检查点：

# %% [markdown] en="fe6effcd"
# 一个新的会话：像开始时那样构建一切，然后加载。对调度器来说顺序很重要：先构建优化器和调度器（调度器的构造函数会把学习率设为它的初始值），然后才加载优化器的状态（它会恢复保存时的学习率）以及调度器的状态。
#
# `opt.load_state_dict` 返回一份报告，列出加载的值替换了哪些超参数：这里是学习率，调度方案此前已经把它调低了。如果你恢复时**有意**要改某个超参数，就在加载之后再设置它，否则生效的是检查点中的值。

# %% [markdown] en="aee881db"
# ### 深入一步：漏掉一部分会怎样
#
# 恢复时不加载优化器、调度器或加载器的状态，看看训练会走到哪里去。

# %% [markdown] en="80ffa3db"
# Adam 为每个参数保存两个滑动平均（running average），一个是梯度的，一个是梯度平方的，另外还有一个步数；带动量（momentum）的 SGD 保存一个速度。它们和权重一样是训练的一部分。如果只用权重恢复，配上新的优化器和从零开始的平均值，之后走的每一步都会不同。检查点的其他部分也一样：漏掉一样，训练就会偏离原来的轨迹。

# %% [markdown] en="e979642b"
# 每一步的损失显示了几次训练在哪里分道扬镳。新的 Adam 完全不记得之前的梯度，所以它的第一步让每个坐标都移动整整一个学习率，不管梯度有多大；而这个学习率又回到了代码中的值（调度方案已调到的学习率是优化器状态的一部分）。重新开始之后损失立即跳升，而精确恢复的那次则沿着一口气训练的曲线走。

# %% [markdown] en="c3d294b3"
# ## 检查点文件是什么
#
# `dt.save` 写的是一个 [safetensors](https://huggingface.co/docs/safetensors) 文件：先是 JSON 文件头，记录每个数组的起始位置、数据类型和形状，然后是数组的原始字节。没有别的东西。普通的值（轮数、学习率）和检查点的结构以 JSON 文档的形式存放在文件头的元数据里。任何 safetensors 读取器都能打开这个文件。

# %% [markdown] en="b313543e"
# ### 保存一个张量、一个列表、一个字典
#
# 检查点是一个字典，但 `dt.save` 也接受更小的东西，就像 D2L 中文版的[读写文件](https://zh.d2l.ai/chapter_deep-learning-computation/read-write.html)一节用 `torch.save` 保存它们那样：一个张量、一个张量的列表（或元组）、一个张量的字典。`dt.load` 返回同一种对象。它还接受 `torch.load` 的两个关键字参数：`weights_only=True`（这里的加载始终只加载权重：文件中只有数组和普通的值，从来没有对象）以及 `map_location="cpu"` 或 `"gpu"`（张量放到哪个设备上）。

# %% [markdown] en="6388b40c"
# ### 为什么永远不用 pickle
#
# `pickle.dump` 写下的是一段**程序**，用来重建你的对象，加载时就会运行这段程序；`torch.save`、`paddle.save`、`megengine.save` 都使用它（`torch.save` 把 pickle 和张量的字节一起放进一个 zip 归档）。任何交给你这样一个检查点的人，都可以让它在你的机器上运行他想运行的任何代码。`paddle.load` 和 `megengine.load` 会运行文件里的一切；PyTorch 2.6 把 `weights_only=True` 设为 `torch.load` 的默认值，这时它只重建张量、容器和普通的值，其余的一概以 `UnpicklingError` 拒绝（`weights_only=False` 则又会全部运行）。下面是一个无害的例子：这些“权重”一被加载就会打印一行字。

# %% [markdown] en="980148b0"
# safetensors 文件只可能给你数组，所以无论来源如何，加载它都是安全的。`dt.load` 直接拒绝 pickle，抛出 `dt.CheckpointError`，指出是哪个文件、在里面发现了什么（这里只打印它的 `problem`；完整的报错信息以文件路径开头）。

# %% [markdown] en="fd4c3710"
# ### 深入一步：文件内部，以及它拒绝什么
#
# 文件的字节，`dt.save` 和 `dt.load` 拒绝的保存与加载，损坏的文件，以及过深的嵌套。

# %% [markdown] en="00d7071c"
# **文件的字节**。文件开头是一个 8 字节的数（文件头的长度），接着是 JSON 文件头，最后是数组。用 `safetensors.numpy.load_file` 会得到一个扁平的 NumPy 数组字典，键名是各数组在检查点字典中的路径；其余的结构（轮数、学习率、哪个键是列表……）在文件头的元数据里。

# %% [markdown] en="658a1b2d"
# 要求使用 pickle（`weights_only=False`）会遭到拒绝，并说明原因；保存整个模型对象同样会遭到拒绝，并告诉你该保存什么。下面两条报错信息是英文的，大意是：模型不能保存，只能保存它的权重，即 `model.state_dict()`；dltutor 从不反序列化 pickle，每次加载都只加载权重，去掉 `weights_only` 或传入 `True` 即可。

# %% [markdown] en="dc3a69e2"
# **损坏的文件**。检查点文件可能不完整：磁盘满了，复制被打断了。`dt.load` 在返回任何东西之前会检查整个文件，所以遇到损坏的文件，它永远不会给你半个模型，而是抛出 `dt.CheckpointError`，指出是哪个文件、出了什么问题。

# %% [markdown] en="7193aed1"
# `dt.save` 自己从不留下这样的文件：它先写到一个临时文件，等一切都写到磁盘上后才把它重命名为目标文件，所以保存失败时（这里保存的是模型对象，而不是它的状态字典），之前的检查点完好无损。

# %% [markdown] en="0d5e2604"
# 检查点只有几层深（模型、优化器、普通的值），所以 `dt.save` 拒绝嵌套超过 100 层的结构；`torch.save`（PyTorch 2.13）能用 pickle 保存嵌套约 490 层的字典，再深就会被 Python 默认的递归上限以 `RecursionError` 拦下。`dt.save` 在写入任何内容之前就会拒绝。

# %% [markdown] en="37595275"
# ## 导出某一层
#
# 同样的两个函数也能导出单独一层：保存它的 `state_dict()`（这里是模型的最后一层：它的权重和偏置），用任何 safetensors 读取器查看这个文件，再把它加载到另一个形状相同的层中。在这一层自己的状态字典中，名字没有前缀（是 `weight`，而不是整个模型中的 `4.weight`），所以这个文件可以直接加载到任何 `nn.Linear(16, 3)` 中。

# %% [markdown] en="29207956"
# ## 在新的输出层下加载预训练的主干网络
#
# 实践中最常见的加载不是“精确恢复”，而是“复用”：保留一个在别的任务上训练好的网络的特征层，即主干（backbone），在上面换一个新的输出层，即头（head），用来区分你自己的类别。这时两个状态字典在头的部分不同，必须告诉 `load_state_dict` 跳过什么。这里预训练模型能区分 10 个类别，我们的模型只有 3 个：

# %% [markdown] en="6c4a9102"
# `strict=False` 帮不上忙：它容忍缺失或多余的键，从不容忍形状不同的键，PyTorch 和这里都一样。（Paddle 的 `set_state_dict` 是例外：它跳过形状不符的键，只发出一条警告，其余照常加载；于是，如果忽略了警告，训练就会带着一个自以为已经加载好的头继续下去。）正确的做法是自己先去掉头的键，再用 `strict=False` 加载，并且**读一读返回结果**：它列出了每一个没有被填上的键。

# %% [markdown] en="2b41b4a0"
# **名字必须对得上，而名字对不上时 `strict=False` 不会大声告诉你**。假设预训练文件来自模型的一个旧版本，那时特征块叫 `body`。原样加载时，每个键都是多余的，每个参数都是缺失的：什么都没有加载进去，而且不报错，PyTorch 和这里都一样。检查只需一行：`strict=False` 加载之后，只允许缺少你有意跳过的键，而且不能有多余的键。把键改个名就能让加载对上：

# %% [markdown] en="9f57fda1"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 由数组组成的数据集 | `TensorDataset(X, y)` | `torch.utils.data.TensorDataset` | `paddle.io.TensorDataset` | `megengine.data.dataset.ArrayDataset` |
# | 你自己的数据集 | 继承 `Dataset`（`__len__`、`__getitem__`） | `torch.utils.data.Dataset` | `paddle.io.Dataset` | `megengine.data.dataset.Dataset` |
# | 打乱的批量 | `DataLoader(ds, batch_size, shuffle=True, seed=...)` | `DataLoader(ds, batch_size, shuffle=True, generator=g)` | `paddle.io.DataLoader(ds, batch_size=batch_size, shuffle=True)` | `DataLoader(ds, sampler=RandomSampler(ds, batch_size))` |
# | 后台加载 | `num_workers=2`（线程） | `num_workers=2`（进程） | `num_workers=2`（进程） | `num_workers=2`（进程） |
# | 指定某一轮的打乱顺序 | `loader.set_epoch(e)` | `DistributedSampler.set_epoch(e)` | `DistributedBatchSampler.set_epoch(e)` | — |
# | BLAS 线程 | `OMP_NUM_THREADS`、`threadpoolctl` | `torch.set_num_threads(n)` | `OMP_NUM_THREADS` | —（它的 MKL 是单线程的；推理时用 `set_default_device("multithread4")`） |
# | 保存检查点 | `dt.save({"model": ..., "optimizer": ...}, path)` | `torch.save(...)`（pickle）或 `safetensors.torch.save_file` | `paddle.save(state, path)`（pickle） | `megengine.save(obj, path)`（pickle） |
# | 加载它 | `dt.load(path)`（始终只加载权重） | `torch.load(path, weights_only=True)` | `paddle.load(path)` | `megengine.load(path)` |
# | 保存一个张量、列表、字典 | `dt.save(x, path)`、`dt.save([x, y], path)` | `torch.save(x, path)` | `paddle.save(x, path)` | `megengine.save(x, path)` |
# | 加载到某个设备 | `dt.load(path, map_location="cpu")` | `torch.load(path, map_location="cpu")` | `paddle.load(path)` 然后 `.cuda()` | `megengine.load(path, map_location=...)` |
# | 恢复权重 | `model.load_state_dict(sd)` | `model.load_state_dict(sd)` | `model.set_state_dict(sd)` | `model.load_state_dict(sd)` |
# | 只加载对得上的部分（新的头） | `model.load_state_dict(sd, strict=False)` | `model.load_state_dict(sd, strict=False)` | `model.set_state_dict(sd)`（形状不符的键跳过并发出警告） | `model.load_state_dict(sd, strict=False)` |
# | 恢复优化器 | `opt.load_state_dict(sd)` | `opt.load_state_dict(sd)` | `opt.set_state_dict(sd)` | `opt.load_state_dict(sd)` |
# | 恢复调度方案 | `sched.load_state_dict(sd)` | `sched.load_state_dict(sd)` | `sched.set_state_dict(sd)` | `sched.load_state_dict(sd)` |
#
# ## 小结
#
# **两句话**：加载器对每个数组用一次索引取出一个批量，顺序由种子和轮次确定。检查点以数组和普通的值（而不是 pickle）保存整个训练的状态，所以恢复后的训练逐位相同地继续下去。
#
# * 把数组包装在 `TensorDataset` 中：`DataLoader` 对每个数组做一次花式索引就能取出一个批量。`shuffle=True, seed=...` 每轮给出一个新的、可复现的顺序，每个样本恰好一次；`drop_last=True` 丢掉不完整的批量；内存映射的 `.npy` 可以提供比内存还大的数据。
# * `num_workers=2` 在模型训练的同时用后台线程读取后面的批量，批量内容完全相同。只有工作会释放 GIL 时（I/O、NumPy、BLAS、GPU），线程才有帮助；纯 Python 循环则不行。在多核 CPU 上，让 BLAS 使用这些核心、使用更大的批量，并在后台加载。
# * 检查点包括模型、优化器（动量、Adam 的矩、当前学习率）、调度器和数据位置。全部保存、重新构建、全部加载，训练就会逐位相同地继续。漏掉一样就不行。
# * `dt.save` 写的是 safetensors：数组加上一个 JSON 文件头，在哪里都能读，加载是安全的，从来不是 pickle。它既接受完整的检查点，也接受一个张量、一个列表或一个字典；`dt.load` 接受 `torch.load` 的 `weights_only` 和 `map_location`。加载损坏的文件或其他格式的文件会抛出 `dt.CheckpointError`，指出是哪个文件。
# * 要复用预训练的主干并换上新的头，就去掉头的键，用 `strict=False` 加载，再检查返回结果：只允许缺少你跳过的键，不允许有多余的键（改了名的块会悄无声息地什么也加载不进来）。
#
# ## 练习
#
# 每道练习都有一个供你作答的单元格：把 `____` 换成你的答案，运行这个单元格，最后一行会检查它。`ex.q1.hint()` 给出一条提示（再调用一次给出下一条），`ex.q1.solution()` 显示一种答案，`exercises.progress()` 列出每道练习的完成情况。

# %% [markdown] en="2b42c203"
# **1.** 把 Adam 换成 `optim.SGD(model.named_parameters(), lr=0.1, momentum=0.9)`：SGD 在 `opt.state_dict()["state"]` 中为每个参数保存了什么（`sgd_state_keys`，这些键的名字）？为什么没有它，恢复就不再精确？

# %% [markdown] en="94739c0f"
# **2.** 对 100 个样本、`batch_size=32`，`DataLoader` 在不加和加 `drop_last=True` 时各给出多少个批量（`batches`，一个二元组）？

# %% [markdown] en="926a3bb1"
# **3.** 一个给每个样本加一点噪声（数据增强）的 `Dataset`，在 `num_workers=2` 时必须给出与 0 时相同的批量。写一个函数 `noise(i, epoch)`，返回 3 个小的随机数，使同一轮中的同一个样本无论由哪个线程抽取，总是得到相同的噪声。

# %% [markdown] en="a05e1694"
# **4.** 保存 `{"weights": dt.ones(2), "epoch": 3, "lr": 0.05}` 再加载回来：加载得到的 `"epoch"`、`"lr"` 和 `"weights"` 各是什么类型？按这个顺序给出三个类型（`loaded_types`）。

# %% [markdown] en="a6a596ba"
# **5.** （实验题，不自动检查。）在一轮的中间（3 个批量之后）保存检查点并精确恢复（`loader.order(e)` 给出第 `e` 轮的顺序；用 `itertools.islice` 跳过已完成的批量）。然后把那个很慢的数据集的 `__getitem__` 从 `time.sleep` 改成一个纯 Python 循环，分别在 0 个和 2 个工作线程下为一轮计时，并解释结果。
