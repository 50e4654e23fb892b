# %% [markdown] en="b1460d3b"
# # 跨进程的参数
#
# **约 30 分钟**。学完本章，你将能够：
#
# * 从笔记本启动多个进程，并让模型的各个副本保持相等；
# * 解释数据并行训练为什么要对梯度求平均，以及这对学习率（learning rate）意味着什么；
# * 在多个进程上正确处理冻结（freeze）的和未用到的参数、梯度累积与梯度裁剪（gradient clipping）；
# * 在 BatchNorm 与 SyncBatchNorm 之间做出选择，并用 ZeRO 切分优化器的状态；
# * 从每个进程自己的日志中找出是哪个进程失败、为什么失败。
#
# 一个进程一次在一个批量上训练。**数据并行**（data parallelism）运行同一个程序的 N 份拷贝：每个进程持有模型的一个完整副本，取每个批量中属于自己的那一份，每次反向传播（backpropagation）之后各进程对梯度求平均，于是每个副本都走同样的一步。本章在你自己的机器上运行两个这样的进程，并追问：每个参数要做到什么，才能在两个地方仍是同一个模型。

# %% [markdown] en="83c6866a"
# ## 怎样从笔记本在多个进程上运行同一个程序
#
# `dist.start_engines(2)` 启动两个 MPI 进程，即**引擎**（engine），就像 `mpiexec -n 2 python train.py` 那样。以 `%%px` 开头的单元格在两个进程中同时运行，并在 `[stdout:0]` 和 `[stdout:1]` 下分别显示各自打印的内容：这个编号就是进程的**序号**（rank）。普通单元格仍在这里运行，即笔记本自己的单个进程中。

# %% [markdown] en="c12020fb"
# 同样的代码运行了两次，而每份拷贝都知道自己是谁。下面的一切都由此而来：进程用自己的序号挑出属于自己的那份数据，用集合通信（`all_reduce`、`broadcast`）与其他进程取得一致。
#
# `all_reduce` 在每个进程中把一个张量替换为它在所有进程上的和；`broadcast` 把一个进程的张量复制到其他所有进程：

# %% [markdown] en="d8fc3cf1"
# ## 为什么每个副本必须从相同的权重开始
#
# 每个进程各自构建自己的模型。如果每个进程用不同的种子（或者根本不设种子），各副本一开始就是不同的网络，对它们的梯度求平均就成了对两个不同模型的梯度求平均。`dist.check_replicas(model)` 在各进程之间比较每个参数和缓冲区：

# %% [markdown] en="da06b285"
# 把模型包进 `DistributedDataParallel`（DDP）时，它先把 0 号进程的参数和缓冲区**广播**到每个进程，PyTorch 的也是如此：从此各副本相等。

# %% [markdown] en="35c33678"
# 一开始相等还不够：每个进程看到的数据不同，所以每个副本自己的梯度也不同。不求平均，各自按自己的梯度走，每个副本就会渐渐偏离：

# %% [markdown] en="df2f5d62"
# ## 为什么要对梯度求平均
#
# 每个进程计算它自己 8 行数据上平均损失的梯度。随后 DDP 的反向传播在每个进程中把它替换为各进程上的**平均值**：对它们的和做一次 `all_reduce`，再除以 N。两个 8 行上的均值再取均值，就是全部 16 行上的均值，所以两个批量为 8 的进程走的，正是一个批量为 16 的进程所走的那一步。

# %% [markdown] en="005c2205"
# 在每个引擎里拿一个喂入整个批量的模型来核对（PyTorch 的 DDP 也这样求平均）：

# %% [markdown] en="07678bf7"
# 两者在 float64 的舍入误差内一致，但并非逐位相同：整个批量按一种顺序对 16 行求和，两个进程则各对 8 行求和，再把两者相加。按进程的顺序求和（每一半的梯度，相加，再减半），就完全一致了：

# %% [markdown] en="7f3a1390"
# 于是每个副本都用同样的梯度走一步，它们保持相等。用带动量（momentum）的 SGD 走三步，各副本仍是同一个模型：

# %% [markdown] en="c1b381f4"
# ## 进程变多时学习率该怎样变
#
# N 个进程、每个批量为 B 时，一步用到 N x B 个样本，一轮（epoch）的步数少到 N 分之一。平均后的梯度与单个进程的梯度大小相同，只是噪声更小，所以学习率不变时，模型每轮移动的距离只有原来的 N 分之一。**线性缩放规则**（linear-scaling rule，Goyal 等人，2017）把学习率乘以 N：批量 N x B、学习率 N x η 的一步，接近批量 B、学习率 η 的 N 步，只要梯度在这 N 步里变化不大。
#
# 下面在笔记本自己的进程中，用一个线性回归来比较：8 行一步、学习率 0.05 走四步，对比全部 32 行、学习率 0.2 走一步。

# %% [markdown] en="e9071dd0"
# 放大后的学习率落在四小步附近；不放大的只走了大约四分之一的路。"接近"只在梯度于它所替代的 N 步内变化不大时成立，而训练刚开始时梯度变化很快：权重是随机的，梯度很大。所以这条规则要配上**预热**（warmup）：在最初几百步里，学习率从一个小值升到 N x η。以 4 个进程、在单个进程上找到的基础学习率 0.1 为例：

# %% [markdown] en="77653e61"
# 这条规则是一个起点，不是定律：在上面那篇论文中，它对 ResNet 一直成立到几千张图像的批量；超过这个规模（或者用 Adam，它的步长较少依赖梯度的大小），最佳学习率的增长比 N 慢。

# %% [markdown] en="a567dae0"
# ## 为什么冻结的或未用到的参数会让 DistributedDataParallel 停下
#
# 当它包装的每个参数都收到了梯度，DDP 就知道一次反向传播结束了。前向计算从不用到的参数永远收不到梯度，于是 DDP 一直等它；下一次前向计算就会报错停下，否则各进程会永远互相等待。这里有第二个输出头，但这一步没有用到它：

# %% [markdown] en="cbfe228f"
# PyTorch 也同样停下（它的消息是 "Expected to have finished reduction in the prior iteration"）。有两条出路：
#
# * 在包装**之前**把从不训练的参数**冻结**（`requires_grad_(False)`）：DDP 会把冻结的参数完全排除在它的归约之外。
# * `find_unused_parameters=True`：每次前向计算之后，DDP 遍历计算图（computational graph），找出没有到达的参数，把它们算作已完成。它们的 `grad` 保持 None。代价是：每一步都要遍历整个计算图，哪怕这一步用到了所有参数。

# %% [markdown] en="af523646"
# 两种做法给用到的参数的平均梯度都一样。永久冻结的就冻结；`find_unused_parameters` 留给前向计算确实每步都在变化的模型。

# %% [markdown] en="26682bc7"
# ## 多个进程时梯度累积怎样进行
#
# 在走一步之前对 4 个微批量做累积（第 10 章），只需要在最后一次反向传播时求一次平均。在 `with ddp.no_sync():` 之内，反向传播只把梯度加到本进程自己的梯度上；它之外的第一次反向传播再对这个和求平均。我们把 DDP 调用的那个 all_reduce 包一层，数一数它发出了多少次：

# %% [markdown] en="1074c28f"
# 四次求平均变成了一次（这里每次是两个 all_reduce），而梯度不变：和的平均等于平均的和，差别只在舍入。PyTorch 的 `no_sync()` 也是这样。在真实的网络中，all_reduce 要让每个梯度都经过网卡，所以梯度累积正是在这里省下时间。

# %% [markdown] en="9cac1e0f"
# ## 多个进程时怎样按全局范数裁剪梯度
#
# `clip_grad_norm_`（第 09 章）按所有梯度合在一起的范数，用同一个因子缩放全部梯度。在多个进程上，"所有梯度"指的是整个批量的梯度：每个进程在求平均之前自己的梯度有另一个范数，用它来裁剪，每个副本就会得到另一个因子。

# %% [markdown] en="2b49827c"
# 两个进程自己的范数彼此不同，也不同于平均后梯度的范数：按进程各自裁剪，各副本就会走散（或者，在求平均之前裁剪，走出的一步是任何一个拿整个批量的进程都不会走的）。DDP 的反向传播之后，梯度已经平均过了，所以在那里调用 `clip_grad_norm_`，每个进程看到的都是正确的范数。
#
# 当每个进程只持有梯度的**一部分**时（ZeRO 的后几个阶段、跨进程切分的模型），全局范数是**每个进程范数平方之和**的平方根：只需对一个数做一次 `all_reduce`。这里每个进程取一半参数的平方（来自一次新的、尚未裁剪的反向传播）：

# %% [markdown] en="6d4efa5d"
# ## 为什么各进程的 BatchNorm 统计量不同
#
# BatchNorm 用**它看到的那个批量**的均值和方差做归一化。在每个进程中，那只是本进程的一份：两个批量为 8 的进程在 8 行上算出两组统计量，而不是在 16 行上算出一组，它们的滑动平均统计量（running statistics）也就渐渐分开。让 1 号进程的数据平移 +3（就像数据集是排好序的，而每个进程读取连续的一段）：

# %% [markdown] en="66bd45ba"
# 用 BatchNorm 时，每个进程保留自己的滑动平均统计量；用 SyncBatchNorm 时，两个进程持有同一个。哪个对？在每个引擎里，用一个拿整个 16 行批量的进程来核对：

# %% [markdown] en="24e10283"
# SyncBatchNorm 对各通道的和与计数做 all_reduce（然后是到均值的距离的平方），所以它的统计量就是整个批量的，前向和反向都是。代价是每次前向计算里都有集合通信；当每个进程的批量够大、又来自同一分布时（用一个会打乱的 `DistributedSampler`），普通的 BatchNorm 就够了。
# 评估时两者都用滑动平均统计量，没有集合通信。普通的 DDP 在每次前向计算时把 0 号进程的缓冲区复制到其他进程（`broadcast_buffers=True`，默认值），所以保存下来的滑动平均统计量是 0 号进程的。

# %% [markdown] en="d632206a"
# ## 多个进程中有一个失败时怎么办
#
# 有多个进程时，一个进程里的错误常常在别处显现。其他进程在集合通信里等待一个已经死掉的进程，你看到的是超时、"NCCL error"，或者启动器的一段汇总，比如 "Out of all 4 Trainers" 列出哪些失败了，而不是错误本身。真正的消息在**失败进程自己的输出**里。先读它：
#
# * 每个进程都写自己的日志；找到第一个失败的序号，从头读它的日志（其他进程只会报告它消失了）；
# * 只在一个序号上出现的错误，通常来自只有那个序号才做的事：它那份数据（一个坏样本、一个空的最后批量）、它的 GPU（显存不足、设备编号错误），或者写在 `if rank == 0:` 下面的代码；
# * NCCL 报错大多只是症状：一个进程死了，各进程调用了不同的集合通信，或者张量形状不同；设置 `NCCL_DEBUG=INFO` 让 NCCL 多说一些。如果每次运行都失败，连最小的也不例外，就用 NVIDIA 的 `nccl-tests` 检查机器本身：驱动或 NCCL 的安装不匹配是另一个常见原因；
# * 每个进程都需要自己的那份数据：在 `DataLoader` 里用一个 `DistributedSampler`（`sampler=`），并调用 `set_epoch(epoch)`，让每一轮重新打乱。
#
# 下面是本套件的采样器，在两个引擎中运行：每个进程拿到自己的一半，两半合起来恰好覆盖数据集一次。

# %% [markdown] en="d28e8e9b"
# 一个引擎里的错误显示在它自己的序号下，带着它自己的回溯信息：这就是笔记本里"读每个序号的日志"。这里 1 号进程的那份行超出了数据的末尾：

# %% [markdown] en="41b16e3e"
# Paddle 的启动器把每个进程的日志写进一个文件夹：`python -m paddle.distributed.launch --log_dir logs train.py` 会产生 `logs/workerlog.0`、`logs/workerlog.1` 等文件。某个进程失败时，它的汇总会给出序号和日志（`Container rank 1 status failed ... log logs/workerlog.1`），而 `workerlog.1` 里是那个进程的回溯信息。在 MPICH 的 `mpiexec` 下，`-outfile-pattern log.%r` 为每个序号写一个文件（`log.0`、`log.1`）。

# %% [markdown] en="de7fb32d"
# ## 每个进程需要多少优化器内存
#
# 用普通的优化器时，每个进程都保存完整的优化器状态：Adam 的两个矩相当于模型的另外两份拷贝，而且每个进程里都一样。**ZeRO 第 1 阶段**（`ZeroRedundancyOptimizer`）把参数分给各进程：每个进程只保存自己那份的状态，只更新那一份，再把更新后的值广播给其他进程。先看一个用普通 Adam 的进程持有多少，就在笔记本这里：

# %% [markdown] en="563999f5"
# 在两个引擎中，同一个模型用 DDP 包装，再用 `ZeroRedundancyOptimizer` 包住 Adam：

# %% [markdown] en="a5b9735d"
# 每个进程持有这 2800 字节中的大约一半。两半并不完全相等：参数从不被切开，而是整个分给目前持有值最少的进程。更新就是普通 Adam 的算术，所以各副本保持相等。
#
# ### 切分后的优化器的检查点
#
# 没有哪个进程持有完整的优化器状态，所以检查点必须先把它收集起来：在每个进程中调用 `consolidate_state_dict(to=0)`，把各份收集到 0 号进程，此时它的 `state_dict()` 就是一个普通 Adam 的状态。0 号进程把它保存下来，两个进程再继续走三步：

# %% [markdown] en="2a054dd6"
# 在这里，用**一个**进程和一个普通的 Adam 恢复它：合并后的状态就是普通优化器的状态。为了做两个进程的工作，取每一半的梯度，相加后减半（正是 DDP 的平均所算的），走完同样的三步后，权重与两个进程的权重逐位相同：

# %% [markdown] en="32e81ef4"
# ### 深入一步：四个进程
# 4 个进程时每个进程的内存，以及在 4 个进程上恢复同一个检查点。

# %% [markdown] en="6725d5fb"
# 四个引擎取代了两个（在双核笔记本电脑上，四个进程轮流运行：对这点小工作量没有问题）。每个进程自己计算两半的梯度，让比较保持精确，而 `ZeroRedundancyOptimizer` 把 Adam 的状态分成四份：

# %% [markdown] en="f2aef5b0"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 平均梯度，副本从相等开始 | `dist.DistributedDataParallel(model)` | `torch.nn.parallel.DistributedDataParallel(model)` | `paddle.DataParallel(model)` | `dist.bcast_list_(model.parameters())`，然后 `GradManager().attach(params, callbacks=[dist.make_allreduce_cb("mean")])` |
# | 跳过 all_reduce | `ddp.no_sync()` | `torch.nn.parallel.DistributedDataParallel.no_sync` | `paddle.DataParallel.no_sync` | — |
# | 某一步用不到的参数 | `find_unused_parameters=True` | `find_unused_parameters=True` | `find_unused_parameters=True` | — |
# | 每个进程各取一份数据 | `dist.DistributedSampler(dataset)` | `torch.utils.data.distributed.DistributedSampler(dataset)` | `paddle.io.DistributedBatchSampler(dataset, batch_size)` | `megengine.data.RandomSampler(dataset, batch_size)`（它自己按序号分份） |
# | 整个批量的统计量 | `dist.SyncBatchNorm.convert_sync_batchnorm(model)` | `torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)`（仅 GPU） | `paddle.nn.SyncBatchNorm.convert_sync_batchnorm(model)`（仅 GPU） | `megengine.module.SyncBatchNorm(channels)` |
# | 切分优化器状态（ZeRO-1） | `dist.ZeroRedundancyOptimizer(params, optim.Adam)` | `torch.distributed.optim.ZeroRedundancyOptimizer(params, torch.optim.Adam)` | `paddle.distributed.sharding.group_sharded_parallel(model, opt, level="os")`（仅 GPU） | — |
#
# ## 小结
#
# **两句话**：数据并行在 N 个进程中保持同一个模型：每个副本从相同的权重出发，每个梯度都求平均，所以每一步都是整个批量的一步。裁剪的范数、BatchNorm 的统计量和切分后优化器的检查点，也都必须看到每个进程。
#
# * DDP 在开始时广播 0 号进程的权重；不求平均，各副本就会偏离。
# * N 个批量为 B 的进程走的是一个批量为 N x B 的进程的那一步（float64：差在舍入，按同样顺序求和时逐位相同）；学习率随 N 放大，并做预热。
# * 没有任何前向计算用到的参数会让 DDP 停下：在包装之前冻结它，或者为 `find_unused_parameters=True` 付出每步一次遍历计算图的代价。
# * `no_sync()` 跳过除最后一个微批量之外的 all_reduce：梯度相同，消息更少。
# * 按平均后梯度的范数裁剪，或者按各份平方和经 all_reduce 后的结果裁剪，绝不能按一个进程自己的范数。
# * BatchNorm 只看到本进程的一份；SyncBatchNorm 看到整个批量。
# * ZeRO-1 让每个参数的优化器状态只存在一个进程中；保存前合并到 0 号进程，恢复时进程数可以任意。
# * 一个进程失败时，读第一个失败序号自己的日志。
#
# ## 练习
#
# 每道练习都有一个填写答案的单元格：把 `____` 换成你的答案，运行该单元格，最后一行会检查它。`ex.q1.hint()` 给出提示（再调用一次给出下一条），`ex.q1.solution()` 显示一个答案，`exercises.progress()` 列出每道练习的进度。

# %% [markdown] en="1a892523"
# **1.** 一个模型在单个进程中以批量 32、学习率 0.05 训练得很好。你把它搬到 8 个进程上，每个进程批量 32。按线性缩放规则，预热应当升到哪个学习率（`scaled_lr`）？

# %% [markdown] en="217026f1"
# **2.** 两个进程各持有参数的平均梯度的一半。两半的范数平方分别是 9.0 和 16.0。全局范数裁剪必须用哪个范数（`global_norm`）？

# %% [markdown] en="b629f7dd"
# **3.** 一个模型有 1,000,000 个 float32 参数值，用 Adam 训练（每个值两个矩），外面包着 `ZeroRedundancyOptimizer`，在 4 个进程上平均分配参数。每个进程持有多少字节的 Adam 状态（`bytes_per_process`）？

# %% [markdown] en="7d7edd1d"
# **4.**（不检查：实验。）在梯度平均那一节，给两个进程的 `make_net` 用不同的种子，但跳过 DDP 的广播（自己用 `dist.all_reduce` 对梯度求平均再除以 2）：三步之后，`check_replicas` 说什么？然后用 `broadcast_buffers=True` 把 BatchNorm 模型训练几步，比较两个进程的滑动平均统计量。
