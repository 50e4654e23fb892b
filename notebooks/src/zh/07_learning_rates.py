# %% [markdown] en="74e8891e"
# # 训练中的学习率、步数计算与自己写优化器
#
# **约 30 分钟**。学完本章，你将能够：
#
# * 在训练中途改变某个参数组（parameter group）的学习率（learning rate），并说出学习率为 0 时还有什么在继续运行；
# * 手工或用调度器衰减学习率，并与参数的 `lr_mult` 结合起来；
# * 把各参数组的学习率换算成同一个调度的比例，或者反过来换算；
# * 预测优化器、每个参数和调度器各自的步数；
# * 用一个 `update` 方法写出新的优化器，并分清耦合与解耦的权重衰减（weight decay）。
#
# 第 6 章给每个参数组各自的学习率，在整个训练中固定不变。真实的训练会一边走一边改变学习率：已经学够的部分停下来，每个学习率逐轮（epoch）缩小，预热（warmup）从很小的值开始。本章在同一个 LeNet 和手写数字上做这些事，并把每个结论都与手算的参数值和学习率对照。

# %% [markdown] en="effd17a0"
# 网络、数据和辅助函数都是第 6 章的，来自 `dltutor.examples`：`make_net()` 给出一个新的 LeNet（`conv1`、`conv2`、`fc1`、`fc2`），`make_loader()` 给出 1500 个训练数字、分成 24 个打乱的 64 样本批量，`train_epoch(net, opt, loader)` 训练一轮，`accuracy(net)` 在 297 个测试数字上计算准确率，`snapshot` / `unchanged` / `all_changed` 用来比较前后的参数值。下面大多数实验使用第 6 章的两个参数组：卷积层的学习率为 0.05，全连接层为 0.01。

# %% [markdown] en="1ae84951"
# ## 在训练中改变参数组的学习率
#
# 优化器在每次 `step()` 时都重新读取 `group["lr"]`，所以你可以随时修改它。一个常见的用法：网络的某一部分已经学够了，就把它所在组的学习率设为 0，让其余部分继续。
#
# 我们训练四轮，动量（momentum）取 0.9，在第二轮之后把全连接组的学习率设为 0；每轮都打印 `fc2.bias` 的几个值，并保存两个组的快照。

# %% [markdown] en="ba19f09c"
# 修改之后，打印出的值就不动了。断言逐个元素地检查：第 2 轮和第 3 轮之后的全连接参数等于第 1 轮之后的；每个卷积参数都在继续变化。

# %% [markdown] en="437cb7b3"
# 学习率为 0 并不阻止反向传播（backpropagation），所以它们的梯度每一步仍在计算，动量缓冲区也仍有值；只是更新量被乘以了 0。（第 8 章的 `why_not_updating` 会用文字说出这个原因，以及参数不动的其他原因。）

# %% [markdown] en="ace533d4"
# 同一次训练的图示：每一步每一层的更新量大小。我们挂上一个 `Recorder`（它通过优化器的钩子读取每一步）重新训练这四轮；在修改的那一刻，全连接层的曲线降到零，它们被冻结（freeze）的那些步用阴影标出。

# %% [markdown] en="df187e0e"
# ### 深入一步：NaN 和无穷大的学习率
#
# dltutor 在哪些地方检查学习率，其他框架又会放过哪些疏漏。

# %% [markdown] en="2ea8049b"
# 在这里，任何 `>= 0` 的数都可以作为学习率，但 NaN 和无穷大不行：**dltutor 会拒绝它们，而 PyTorch 不会**。PyTorch 的 SGD 只检查 `lr < 0`，对 NaN 这个判断为 False；Adam、AdamW、Adagrad 和 RMSprop 在构造函数中会拒绝 NaN，但它们都接受无穷大，而且都不检查事后写进 `param_groups`、用 `add_param_group` 加入或从状态字典加载的 NaN。这样的学习率（来自公式中的笔误、调度器或检查点）会在下一步把所有权重都变成 NaN。dltutor 在构造函数、`add_param_group`、加载的状态字典中都检查学习率，你手工写进 `param_groups` 的值也在写入时就检查：这次写入被拒绝，什么都没有改变：

# %% [markdown] en="e757ed05"
# ## 每轮衰减学习率
#
# 大多数训练都会在进行中降低学习率：早期步子大，最后步子小以便收敛。最简单的方案是**线性衰减**：在共 `E` 轮中的第 `e` 轮，使用 `lr = initial_lr * (1 - e / E)`。
#
# ### 手工衰减
#
# 在每轮之前，把新的值写进每个参数组。先记住每个组自己的初始值，否则所有组最后会得到同一个学习率：

# %% [markdown] en="a1c455ce"
# 一个诱人的捷径是把同一个初始学习率写进每个组（`group["lr"] = 0.05 * (1 - epoch / E)`）。它会悄悄丢掉各组自己的学习率：这样做之后，全连接组也以 0.05 训练了。

# %% [markdown] en="a7800af3"
# ### 使用学习率调度器
#
# 调度器替你管这笔账。它记住每个组的初始学习率（记为 `group["initial_lr"]`），每次你调用 `scheduler.step()` 时设置每个组的 `lr`，调用时机是在这一轮优化器的各步**之后**。`start_factor=1.0`、`end_factor=0.0`、共 10 步的 `LinearLR` 正好就是上面的线性衰减：

# %% [markdown] en="14ecf9fb"
# ### 常见的学习率曲线
#
# `lr_scheduler.preview(make_scheduler, steps)` 在一个用完即弃的优化器上运行调度方案，返回每一步的学习率，`plot.lr_schedule` 把它画出来。下面是从学习率 0.05 开始、共 30 轮的四种常见形状：
#
# * `LinearLR`：一条向下的直线（我们的衰减）；
# * `StepLR`：每 `step_size` 轮乘以 `gamma`（阶梯状）；
# * `CosineAnnealingLR`：从初始学习率沿半个余弦降到 `eta_min`；
# * `LinearWarmup`：从很小的值开始，在几轮内线性上升，然后交给另一个调度方案（这里是余弦）。新网络最初的几次更新可能很剧烈；预热让它们保持很小。

# %% [markdown] en="1a29aa6c"
# ### 用 SequentialLR 预热，以及损失停滞时降低学习率
#
# PyTorch 用 `SequentialLR` 写“预热 + 余弦”：在里程碑之前用一个调度，之后换成下一个，并让它从头开始；它的预热通常是一个从较小的 `start_factor` 开始的 `LinearLR`（这里是 0.01：第一轮就用学习率的 1%，而 `LinearWarmup` 从 0 开始）。dltutor 有同样的类，给出与 PyTorch 相同的数。
#
# `ReduceLROnPlateau` 不按日程走：每轮结束后把验证损失交给它（`sched.step(val_loss)`），连续超过 `patience` 轮没有改进，它就把学习率乘以 `factor`，然后重新计数。不知道训练要跑多久时，就用它。下图中，两种预热只在起点上不同；平台调度的学习率在最佳损失（0.69）之后的第三轮减半。

# %% [markdown] en="e91e3f1d"
# ### 先预热，再交给 ReduceLROnPlateau
#
# 这两种调度可以组合：先预热几轮，再让验证损失决定学习率。把平台调度作为 `after` 传入，每轮把损失交给预热调度：`warm.step(val_loss)`。平台调度从交接的那一轮开始观察，也就是第一个使用完整学习率的轮；预热期间的损失是在较小的学习率下测得的，不计入。这里预热的最后一个损失是 0.5，如果计入，使用完整学习率的头几轮就会显得变差，学习率会过早减半。交接之后，不带损失的 `warm.step()` 会被拒绝。PyTorch 的 `SequentialLR` 不接受 `ReduceLROnPlateau`，所以 PyTorch 用户要自己手写，得到的学习率完全相同：`warmup = LambdaLR(opt, lambda e: e / 3)`，每轮结束后执行 `warmup.step() if epoch < 3 else plateau.step(val_loss)`。
#
# 手算一下：初始学习率为 0.1，预热 3 轮，第 0 到 2 轮依次是 0、0.0333、0.0667，从第 3 轮起是 0.1。最佳损失 0.55 出现在第 5 轮之后；第 8 轮是连续第三个没有更好损失的轮，超过了 `patience=2`，于是它之后学习率减半为 0.05；第 12 轮之后再减半一次。

# %% [markdown] en="ca9d5ee4"
# ### 深入一步：真实训练中的线性衰减
#
# 就是“使用学习率调度器”一节里的 `LinearLR` 衰减，在 LeNet 训练时每轮调用一次。

# %% [markdown] en="457c49ae"
# 同样的方案用在真实的训练中：在手写数字上训练几轮，每轮调用一次调度器。每轮使用的学习率在这一轮开始之前记录下来。

# %% [markdown] en="8a68b07d"
# ## 学习率调度器与逐参数的倍数
#
# 调度器改变的是参数组的学习率；参数的 `lr_mult`（第 6 章）乘以组在每一步的学习率。所以全连接组中 `lr_mult = 2` 的参数，开始时以 `0.01 x 2` 训练，在 `StepLR` 把组的学习率减半之后以 `0.005 x 2` 训练。`explain_lr` 会显示这两部分，再用一步普通 SGD 来证明：`fc1.weight` 必须移动 (0.01 × 0.5 × 2) × 梯度。

# %% [markdown] en="929a8164"
# ### 深入一步：在 Paddle 中调度器就是学习率
#
# Paddle 怎样传入调度方案，参数组的学习率和 `ParamAttr` 的学习率又对它有什么作用（练习 3 要用）。

# %% [markdown] en="26d18669"
# Paddle 的搭法正好反过来。你**先**用基础学习率创建调度器，再把它**作为**优化器的 `learning_rate` 传进去；这时参数组的 `"learning_rate"` 是这一个调度方案的**比例**，而不是它自己的学习率：
#
# ```python
# sched = paddle.optimizer.lr.StepDecay(learning_rate=0.05, step_size=2, gamma=0.5)
# opt = paddle.optimizer.SGD(learning_rate=sched, parameters=[
#     {"params": conv_params},                           # 1.0 x the schedule
#     {"params": fc_params, "learning_rate": 0.2}])      # 0.2 x the schedule = 0.01 at first
# ...
# sched.step()                                           # once per epoch, as here
# ```
#
# 在 PyTorch 和 dltutor 中，每个组保留自己的学习率，建立在优化器上的调度器按比例缩放每个组的初始学习率。对于做乘法的调度方案（StepLR、LinearLR、降到 0 的余弦等），只要把 Paddle 的比例 `s` 换算成组的学习率 `base x s`，两者给出的数就相同。下面的单元格算出 Paddle 3.3 给出的数（一个调度方案乘以每个组的比例；`tests/frameworks/test_ch07_learning_rates.py` 在 Paddle 中实测了这些数，也在同样两个组上测了 PyTorch 的 `StepLR`），并逐步与 dltutor 的参数组比较：

# %% [markdown] en="da066d8c"
# Paddle 的 `ParamAttr(learning_rate=m)` 还会再乘一次，就像这里的 `lr_mult`，**但只在扁平的参数列表中如此**：在那里，参数以“调度方案 × `ParamAttr` 学习率”训练。在参数组中它不起作用：Paddle 3.3 添加一个组时，会用该组的 `learning_rate` 覆盖每个参数的 `ParamAttr` 学习率，所以参数以“调度方案 × 组的比例”训练，不管它的 `ParamAttr` 写的是什么（第 6 章说明了正则化项也是如此）。dltutor 的 `lr_mult` 在任何组中都会相乘。练习 3 会算一个例子。

# %% [markdown] en="055c75e5"
# ## 步数怎样增加
#
# 优化器**每调用一次 `step()`** 计一步，也就是每个小批量一步，而不是每轮一步。它保存两个计数器：
#
# * `opt.step_count`：`step()` 被调用了多少次；
# * `opt.state[p]["step"]`：这个参数实际被更新了多少次。Adam 的偏差修正需要它。
#
# 一轮是 `len(loader)` 个批量，所以 `E` 轮之后计数是 `E * len(loader)`。（1500 个样本、每批 64 个，共 24 个批量：23 个完整批量和最后一个 28 个样本的批量。）

# %% [markdown] en="ec5878ed"
# 调度器有自己的计数（`scheduler.last_epoch`）：每次 `scheduler.step()` 计一次。是每轮调用一次还是每个批量调用一次由你决定；只要让 `total_iters`、`step_size`、`T_max` 等与你调用它的单位一致即可。

# %% [markdown] en="d00301c3"
# 只有 `step()` 的调用次数少于批量数，计数才会改变。**梯度累积**（gradient accumulation）就是这样：下面的循环把 4 个批量的梯度加起来再走一步，内存放不下一个大批量时，就用这个办法按大批量训练。于是 24 个批量的一轮只有 6 步：

# %% [markdown] en="0f072ee0"
# ### 深入一步：被跳过的参数与 Paddle 的静态图
#
# 计数的两个特殊情况：没有梯度的参数，以及静态图中的一步。

# %% [markdown] en="f9c0c0fe"
# 没有梯度的参数会被跳过，被跳过的参数**不**计数。在第三轮冻结 `fc1`：`step()` 又被调用了 24 次，但 `fc1` 自己的计数落在了后面。

# %% [markdown] en="5f80521d"
# **在静态图中计数方式相同**。在 Paddle 的静态图模式中，一个训练步就是一次 `exe.run(program, feed=batch)`：程序包含前向传播、反向传播和优化器的更新，每运行一次，优化器前进一步（在 Paddle 3.3 中，Adam 的 `beta1_pow` 累加器每运行一次就乘以一次 `beta1`）。所以 `E` 轮、每轮 `N` 个批量之后，计数是 `N x E`，和这里一样：一次 `exe.run` 相当于 `train_epoch` 循环体的一次执行。

# %% [markdown] en="18a6d94b"
# ## 自己写优化器
#
# 在 dltutor 中，优化器就是基类 `optim.Optimizer` 加上**一个方法** `update`，它在给定梯度的情况下改变一个参数。在调用它之前，基类已经跳过了没有梯度的参数、做了裁剪、加上了权重衰减或参数的正则化项、把组的学习率乘以 `lr_mult`，并计了步数。下面是 `SignSGD` 的全部代码，它按梯度的符号更新：

# %% [markdown] en="08f830dc"
# 我们来写一个新的：**Lion**（Chen 等，2023）的简化版。它为每个参数保存一个动量 `m`，按 `m` 与新梯度的混合值的符号更新，所以每个元素恰好移动 `lr`（在混合值恰好为 0 的地方不动）：
#
# ```
# direction = sign(beta1 * m + (1 - beta1) * g)
# p        -= lr * direction
# m         = beta2 * m + (1 - beta2) * g
# ```
#
# 超参数放进 `defaults`（这让它们成为逐组的设置），动量放进 `state`（这让它成为检查点的一部分）。`xp` 是 NumPy，在 GPU 上则是 CuPy。

# %% [markdown] en="e0998904"
# 它可以直接带着参数组训练 LeNet：

# %% [markdown] en="cba124f1"
# 我们没写的东西也都自动具备了。`lr_mult`：两个梯度相同的参数，一个设置 `lr_mult = 0.5`，每个元素必须分别移动 `lr` 和 `lr / 2`（Lion 让每个元素恰好移动它的学习率）。还有检查点：`state_dict()` 已经按名字保存了每个参数的动量。

# %% [markdown] en="9be00a9c"
# **LionLite 的 `weight_decay` 不是 Lion 的**。LionLite 接受 `weight_decay` 并把它交给基类，基类像对待 SGD 那样处理它：在 `update` 看到梯度之前，把 `weight_decay * p` 加到梯度上（耦合的 L2）。在 Lion 中，这一项落在了**符号函数之内**：在梯度很小的地方，符号完全由衰减决定，参数朝零移动整整一个学习率。Lion 论文像 AdamW 那样把衰减解耦：`p -= lr * wd * p`，放在符号函数之外。梯度为零时，区别一目了然：

# %% [markdown] en="7260f4bf"
# 要让它变成 Lion 的做法，就不要把衰减交给基类（用一个基类不读取的自定义键，比如 `decoupled_wd`），并在 `update` 中、符号步之前缩小 `param.data`：见下面的练习 6。

# %% [markdown] en="cf1c6252"
# ### 深入一步：换一个起点，LionLite 照样能学
#
# 检查上面 LionLite 损失的下降并不是某一个种子碰巧的结果。

# %% [markdown] en="258f954b"
# ### 深入一步：同一个优化器在 PyTorch 和 Paddle 中
#
# 这两个框架怎样写一个新的优化器，它们的基类替你做了什么。章节打开时这一节是折叠的：点击它下面的“cell hidden”按钮（在网站上点击这个方框）即可展开。本章后面的内容都不依赖它。

# %% [markdown] en="8886bc5f"
# **PyTorch**：继承 `torch.optim.Optimizer`，写出完整的 `step()`。什么都不会替你做：你要遍历参数组及其参数，跳过没有梯度的参数，自己加上权重衰减或裁剪。LionLite 在那里是这样的：
#
# ```python
# class LionLite(torch.optim.Optimizer):
#     def __init__(self, params, lr=1e-3, betas=(0.9, 0.99)):
#         super().__init__(params, dict(lr=lr, betas=betas))
#
#     @torch.no_grad()
#     def step(self):
#         for group in self.param_groups:
#             beta1, beta2 = group["betas"]
#             for p in group["params"]:
#                 if p.grad is None:
#                     continue
#                 m = self.state[p].setdefault("exp_avg", torch.zeros_like(p))
#                 p.add_(torch.sign(beta1 * m + (1 - beta1) * p.grad), alpha=-group["lr"])
#                 m.mul_(beta2).add_(p.grad, alpha=1 - beta2)
# ```
#
# **Paddle**：继承 `paddle.optimizer.Optimizer`，重写 `_append_optimize_op(block, param_and_grad)`。和这里的 `update` 一样，它接收一个参数及其梯度；基类已经应用了正则化项和 `grad_clip`。逐参数的缓冲区叫作累加器（accumulator）：在 `_create_accumulators(block, parameters)` 中用 `self._add_accumulator(name, param)` 创建，用 `self._get_accumulator(name, param)` 取出。这个参数的学习率（调度方案乘以参数的 `ParamAttr` 学习率，参数组会用它自己的值覆盖后者）来自 `self._create_param_lr(param_and_grad)`。在动态图模式下，更新就是普通的张量代码。除 LBFGS（它自己写 `step()`）以外，Paddle 自己的优化器都调用融合的算子（SGD 调用 `paddle._C_ops.sgd_`，在 Paddle 3.3 中动态图和新的 PIR 静态图都用它），并保留一个向 `block` 追加算子的分支，供旧式静态图使用，所以它们的 `_append_optimize_op` 会先检查自己运行在哪种模式下。
#
# | 部分 | dltutor | PyTorch | Paddle |
# | --- | --- | --- | --- |
# | 一个参数的更新规则 | `update(param, grad, state, group, lr)` | 你在 `step()` 中写的循环体 | `_append_optimize_op(block, (param, grad))` |
# | 逐参数的缓冲区 | `state`（每个参数一个字典） | `self.state[p]` | `_add_accumulator` / `_get_accumulator` |
# | 这个参数的学习率 | 参数 `lr`（组的学习率 × `lr_mult`） | `group["lr"]` | `self._create_param_lr(param_and_grad)` |
# | 跳过、衰减、裁剪 | 基类（它也计步） | 你自己 | 基类（`regularization`、`grad_clip`） |

# %% [markdown] en="48448f00"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 手工修改学习率 | `group["lr"] = x` | `group["lr"] = x` | `opt.set_lr(x)`（学习率是调度器时抛出 `RuntimeError`）；组的比例在添加该组时被复制到它的参数上，之后再改它没有作用 | `group["lr"] = x` |
# | 学习率调度器 | `optim.lr_scheduler.LinearLR`、`StepLR`、`CosineAnnealingLR`、`LinearWarmup` | `torch.optim.lr_scheduler.LinearLR`、`StepLR`、`CosineAnnealingLR`、`SequentialLR` | `paddle.optimizer.lr.LinearLR`、`StepDecay`、`CosineAnnealingDecay`、`LinearWarmup` | `megengine.optimizer.MultiStepLR` |
# | 调度器放在哪里 | 建立在优化器上：`StepLR(opt, ...)` | 建立在优化器上 | **作为**优化器的 `learning_rate` 传入 | 建立在优化器上 |
# | 调度器下参数组的学习率 | 它自己的学习率，由调度方案缩放 | 相同 | 组的 `learning_rate` 是那一个调度方案的比例 | 与 dltutor 相同 |
# | 逐参数的学习率倍数（learning-rate multiplier） | `p.lr_mult = 2.0` | — | `ParamAttr(learning_rate=2.0)`（仅限扁平列表：参数组会覆盖它） | — |
# | 已走的步数 | `opt.step_count`、`opt.state[p]["step"]` | `opt.state[p]["step"]`（Adam、AdamW） | 每次 `step()` 一步（静态图中每次 `exe.run` 一步） | `opt._state[p]["step"]`（Adam、AdamW） |
# | 写一个优化器 | 继承 `optim.Optimizer`，重写 `update` | 继承 `torch.optim.Optimizer`，写 `step` | 继承 `paddle.optimizer.Optimizer`，重写 `_append_optimize_op` | 继承 `megengine.optimizer.Optimizer`，写 `_create_state` 和 `_updates` |

# %% [markdown] en="2d5ce441"
# ## 小结
#
# **两句话**：优化器每一步都重新读取每个参数组的学习率，所以调度器只是写入一个数，再由每个参数的 `lr_mult` 去乘。步数按每次 `step()` 和每个参数来计，而一个新的优化器只需一个 `update` 方法。
#
# * 优化器每一步都读取 `group["lr"]`：手工修改它（记住每个组自己的初始值），或者交给**调度器**，在优化器之后调用。学习率为 0 会停止更新，但不会停止计算梯度。
# * 参数的 `lr_mult` 乘以它所在组在那一步的学习率。
# * Paddle 把调度器作为优化器的 `learning_rate` 传入，组的 `learning_rate` 是它的比例（并取代组内参数的 `ParamAttr` 学习率）；把比例 `s` 换算成组的学习率 `base x s`。
# * 每调用一次 `step()`（每个批量，或每个累积批量），步数加一；被跳过的参数不计数。调度器有自己的计数。
# * 新优化器就是一个 `update` 方法；参数组、`lr_mult`、衰减、裁剪和检查点都由基类提供。交给基类的 `weight_decay` 是耦合的 L2。
#
# ## 练习
#
# 每道练习都有一个供你作答的单元格：把 `____` 换成你的答案，运行这个单元格，最后一行会检查它。`ex.q1.hint()` 给出一条提示（再调用一次给出下一条），`ex.q1.solution()` 显示一种答案，`exercises.progress()` 列出每道练习的完成情况。

# %% [markdown] en="42c2290f"
# **1.** 在一个 10 轮的训练中，`LinearLR` 调度器改为每个**批量**调用一次，而不是每轮一次。`total_iters` 必须是多少，学习率才会在训练结束时恰好到达终点？

# %% [markdown] en="5f7cb193"
# **2.** 一个 `lr=0.1` 的 SGD，一个调用过一次的 `StepLR(opt, step_size=1, gamma=0.5)`，以及一个 `lr_mult = 3` 的参数：这个参数的有效学习率（`effective_lr`）是多少？用 `diagnose.explain_lr` 检查。

# %% [markdown] en="36fc0726"
# **3.** Paddle 把调度器本身作为优化器的 `learning_rate` 传入，参数组的 `"learning_rate"` 是这一个调度方案的比例（`ParamAttr` 学习率会怎样，见上面关于 Paddle 调度器的“深入一步”一节）。设 `sched = StepDecay(learning_rate=0.05, step_size=1, gamma=0.5)` 是优化器的 `learning_rate`，全连接组是 `{"params": fc_params, "learning_rate": 0.2}`，而 `fc1.weight`（`fc_params` 之一）是用 `ParamAttr(learning_rate=3.0)` 创建的。调用一次 `sched.step()` 之后，`fc1.weight` 以多大的学习率（`paddle_fc_lr`）训练？

# %% [markdown] en="e0dce8c1"
# **4.** 第一节中的 `Recorder`（`rec`）记录了那次训练的每一步，在那次训练中，全连接组的学习率在第二轮之后被设为 0。fc1 的更新量在第几步（`first_frozen_step`，即 `rec.series("update_norm")` 的行号）第一次为零？

# %% [markdown] en="380da6c1"
# **5.** 写一个函数 `warmup_then_cosine(opt, warmup, total)`，为任何一次运行返回一个调度器：第一步使用优化器学习率的 1%，在 `warmup` 步内沿直线升到完整的学习率，然后按余弦降到第 `total` 步时的 0。检查时会在其他长度、其他学习率的运行中逐步推进它。

# %% [markdown] en="79ff39f6"
# **6.** （不检查：实验。）在真实训练的那次运行中（衰减一节里的“深入一步”），把 `LinearLR` 换成 `CosineAnnealingLR(opt, T_max=EPOCHS)`，打印每一轮的学习率。把梯度累积的批量数从 4 改成 8：每轮有多少步，损失还会下降吗？给 `LionLite` 加上解耦的权重衰减（在符号步之前把 `param.data` 缩小为原来的 `1 - lr * wd` 倍），再运行梯度为零的那个单元格：参数应该按比例缩小，而不是移动整整一个学习率。
