# %% [markdown] en="eb93096a"
# # 冻结参数
#
# **约 30 分钟**。学完本章，你将能够：
#
# * 用三种方法让一层停止训练，并说出每种方法还有什么在继续运行；
# * 冻结（freeze）BatchNorm 的滑动平均统计量（running statistics）、一个张量中的某些行，以及剪枝（pruning）后必须保持为零的权重；
# * 查出一个参数为什么会动、或者为什么不动。
#
# 微调一个预训练网络、在固定的特征提取器上训练新的输出层、先让模型的一部分预热再训练其余部分：这些都需要让一部分参数**停止变化**，而其他参数继续训练。做到这一点的几种方法并不相同：有的仍然计算一个随后被扔掉的梯度，有的让优化器的动量（momentum）在后台继续运转，还有一种会让梯度永远堆积下去。
#
# 怎样用 `detach()` 在中间输出处阻断梯度，见 [01 § Stopping the gradient at an intermediate output](01_tensors_autograd.ipynb#Stopping-the-gradient-at-an-intermediate-output)；本章只把它作为故意埋下的 bug 之一。

# %% [markdown] en="b29d8a52"
# ## 让一层停止训练的三种方法
#
# 我们始终使用同一个小网络和同一批数据：一个隐藏层 `net[0]`（我们想冻结的部分）、一个 `Tanh`，以及输出层 `net[2]`。`make_net()` 总是构建同一个网络，所以我们可以在完全相同的起点上比较三种方法。

# %% [markdown] en="4cd87633"
# ### 方法 1：用 requires_grad_(False) 完全不要梯度
#
# `module.requires_grad_(False)` 关掉这个模块每个参数的梯度跟踪（对单个参数：`p.requires_grad_(False)`）。我们给优化器同时加上动量和权重衰减（weight decay），这两样都可能在没有新梯度时移动参数，然后训练。

# %% [markdown] en="bde40304"
# 被冻结的权重从未得到梯度（`.grad` 仍是 None），所以 `step()` 完全跳过了它：优化器没有为它建立状态（没有动量缓冲区，没有步数计数），也没有施加权重衰减。另一层正常训练。

# %% [markdown] en="8e343963"
# ### 方法 2：学习率为 0
#
# 第二种方法保留 `requires_grad=True`，把步长设为零：把这一层所在组的 `lr` 设为 0，或者把它的参数的 `lr_mult` 设为 0（即 Paddle 的 `ParamAttr(learning_rate=0)`），使有效学习率（effective learning rate），即组的学习率 × `lr_mult`，为 0。权重不再移动，但反向传播（backpropagation）照样计算梯度，优化器照样计步，并继续把梯度累积到动量缓冲区中，缓冲区越来越大（权重衰减也被加上了，只是要乘以为零的学习率）。解冻时，这些储存的动量会让这一层猛地一跳，除非你用 `opt.state.pop(p)` 重置它的状态：本节末尾的“深入一步”测量了这一跳。

# %% [markdown] en="e3347b91"
# ### 方法 3：不把这一层交给优化器
#
# 第三种方法只把应该训练的参数交给优化器。这一层保留 `requires_grad=True`，所以反向传播仍会计算它的梯度；`opt.step()` 从不看它。陷阱在于 `opt.zero_grad()`：它只清除优化器自己的参数。我们用一个钩子观察到达这个被排除的权重的每个梯度。

# %% [markdown] en="c294b80d"
# 这个权重从不移动，但它的 `.grad` 保存的是训练开始以来所有梯度的**和**：五步之后，它是第一个梯度的好几倍。反向传播白白做了这些工作；而如果你之后把这一层加进优化器（或者用一个会把它计算在内的 `grad_clip`），它首先看到的就是这个过时的总和。`net3.zero_grad()`（模块的方法，会清除每个参数）可以避免这个问题。要解冻一个被排除在外的层，就先清除它的梯度，再把它作为一个新的参数组（parameter group）加进优化器：

# %% [markdown] en="668c363e"
# ### 三种方法对照
#
# | | `requires_grad_(False)` | 学习率 0（`lr_mult = 0` 或组的 `lr = 0`） | 不交给优化器 |
# | --- | --- | --- | --- |
# | 反向传播是否计算梯度 | 否（`.grad` 保持 None；工作更少） | 是 | 是 |
# | 两步之间的 `.grad` | None | 每步都是新的（`opt.zero_grad()` 会清除） | **不断累积**（只有 `model.zero_grad()` 会清除） |
# | 优化器状态（`step`、动量） | 没有 | **继续前进** | 没有 |
# | 权重衰减 | 不施加 | 施加，但乘以学习率 0：没有作用 | 不施加 |
# | 冻结期间是否移动 | 否 | 否 | 否 |
# | 解冻时 | 动量重新开始 | 储存的动量让它**猛地一跳** | 必须用 `opt.add_param_group` 加入 |
#
# 首选 `requires_grad_(False)`：它代价最小，也不留下任何东西。零学习率便于在训练过程中开关某一层（见 [07 § Changing a group learning rate during training](07_learning_rates.ipynb#Changing-a-group-learning-rate-during-training) 以及实时实验室），但要当心动量。

# %% [markdown] en="cd7b9b0d"
# ### 深入一步：零学习率之后的解冻，以及各框架中的三种方法
#
# 零学习率在解冻那一刻留下的一跳，各框架在每种方法下的表现，以及被冻结的层在反向传播中省下的工作。

# %% [markdown] en="09b8643c"
# **解冻：储存的动量让这一层猛地一跳**。下面把网络复制两份，以同样的步数训练，第一层都被冻结，一份用 `requires_grad_(False)`（方法 1），一份用 `lr_mult = 0`（方法 2），然后解冻。冻结期间两份副本完全相同：第一层在两份中都不动，所以其余部分看到的输入相同，训练方式也相同。一个 `Recorder`（第 9 章用得更多）记录每次更新的大小。

# %% [markdown] en="159200b4"
# `requires_grad` 那一份在解冻时重新开始累积动量：它的第一次更新就是普通的第一步 SGD，即 lr × 梯度。`lr_mult` 那一份则在这个梯度之上，加上了二十个冻结步中储存的动量，一下子跳出好几倍远。

# %% [markdown] en="4d0a0575"
# 阴影部分是冻结的那些步。左边，解冻后的层起步平缓，动量在几步之内逐渐积累。右边，它在第一步就全速出发，推动它的动量是冻结期间积累起来的，来自一个此后已经变了样的网络的梯度。如果你必须用零学习率来冻结，就在解冻时重置状态（对这一层的每个参数执行 `opt.state.pop(p)`）。
#
# **在 PyTorch 和 Paddle 中**。PyTorch 2.13 的 `SGD` 也像上面的 `step()` 一样跳过 `.grad` 为 None 的参数：没有状态，没有衰减，不移动。Paddle 3.3 里的开关写作 `p.stop_gradient = True`（或在构建层时用 `ParamAttr(trainable=False)`）：参数得不到梯度，`paddle.optimizer.Momentum` 不为它建立速度（velocity），也不移动它，权重衰减也不施加。零学习率在 PyTorch 2.13（`lr=0` 的参数组）和 Paddle 3.3（`ParamAttr(learning_rate=0)` 配合 `Momentum`）中表现相同：权重不动，而它的动量缓冲区不断增大。PyTorch 2.13 的 `opt.zero_grad()` 同样只清除优化器自己的参数，而 `model.zero_grad()` 把每个 `.grad` 设为 None。
#
# **被冻结的层不记录计算图（computational graph）**。在方法 1 中，反向传播的工作量也更少。我们的输入 `x` 也不需要梯度，所以一旦第一层的参数被冻结，那一层中就**什么都**不需要梯度了：它的输出在计算时不记录计算图，`grad_fn` 是 None，反向传播在 `Tanh` 处就停下，而不必为它的 32 个数计算梯度再扔掉。PyTorch 2.13 在那里同样不记录计算图（`requires_grad` 为 False，`grad_fn` 为 None）；在 Paddle 3.3 中，被冻结层的输出 `stop_gradient=True`。

# %% [markdown] en="de43011f"
# ## 冻结 BatchNorm 的统计量
#
# BatchNorm 层（批量归一化）保存两类数。`weight` 和 `bias` 是参数，像其他参数一样由优化器学习。`running_mean` 和 `running_var` 是**缓冲区**（buffer）：不是学出来的，而是在训练模式下由每次前向传播根据批量自己的统计量更新，以便在评估时用它们做归一化。优化器从来看不到它们。

# %% [markdown] en="d517ae94"
# ### momentum 0.1 是什么意思
#
# 在训练模式下，每次前向传播都让滑动平均统计量朝批量的统计量移动 `momentum` 那么大的比例：在 PyTorch 默认的 `momentum=0.1` 下，`running = 0.9 * running + 0.1 * batch`（方差用的是批量的无偏方差）。Paddle 用 `momentum=0.9` 写出同一条规则，它是旧值的权重：`running = 0.9 * running + 0.1 * batch`。数字相同，意义相反——移植模型时要换算一下。（还有一处不同：Paddle 3.3 的滑动方差跟随的是批量的有偏方差，除以 n 而不是 n - 1。）

# %% [markdown] en="93ad6e18"
# ### train() 和 eval()
#
# 每个模块都有一个 `training` 标志。`model.train()` 设置它（在这个模块及其所有子模块上），`model.eval()` 清除它。它改变的是一层计算什么，而不是它的参数是否学习：Dropout 不再丢弃，BatchNorm 用它的滑动平均统计量归一化并停止更新它们。PyTorch 2.13 和 Paddle 3.3 以同样的方式切换它们的 BatchNorm 层。先让 BatchNorm 的统计量有保留的价值，就像它已经预训练过一样。

# %% [markdown] en="91f7ae3f"
# 在评估模式下，统计量保持不变，输出恰好是 `(h - running_mean) / sqrt(running_var + eps) * weight + bias`，其中 `h` 是 Linear 层的输出。问题在于：大多数训练循环在每轮（epoch）开始时调用 `model.train()`，这会把 BatchNorm 切回训练模式，你想保留的统计量就漂走了（见下面代码的最后几行）。每次 `model.train()` 之后都要再调用一次 `bn.eval()`，或者用 `use_global_stats=True` 构建这一层（见下面的“深入一步”）。

# %% [markdown] en="6a4aee23"
# ### 深入一步：在训练模式下固定统计量，以及冻结 BatchNorm 的其他方面
#
# `use_global_stats=True` 无论 `train()` 怎么说都让统计量保持不变；它不管、仍在学习的参数；以及 `eps = 0` 的 BatchNorm。

# %% [markdown] en="c0ade874"
# **`use_global_stats=True` 在训练模式下也固定统计量**。Paddle 的 `use_global_stats=True`（dltutor 有同样的参数）让 BatchNorm 总是用它的滑动平均统计量归一化，并且从不更新它们，无论 `train()`/`eval()` 怎么说。默认值 `None` 则跟随模式。（PyTorch 2.13 的 BatchNorm 没有这个参数：在那里，每次 `model.train()` 之后都要再调用一次 `bn.eval()`。）我们训练一个这样设置了预训练 BatchNorm 的网络，并像训练循环那样调用 `model.train()`。

# %% [markdown] en="92c93584"
# 统计量被冻结了，但 BatchNorm 的 `weight` 和 `bias` 仍在学习。要完全冻结这一层需要两者兼备：缓冲区用 `use_global_stats=True`，参数用 `requires_grad_(False)`。反过来不行：只用 `requires_grad_(False)`，滑动平均统计量在训练模式下仍会更新，因为它们不是参数（在 PyTorch 2.13 中也是如此，在 Paddle 3.3 中用 `stop_gradient = True` 也一样）。`dt.diagnose.why_not_updating` 也能回答关于 BatchNorm 缓冲区的问题（见下面代码的最后几行）：它检查的是模式和 `use_global_stats`，而不是优化器。

# %% [markdown] en="5b4f234c"
# `eps` 是在开平方之前加到方差上的一个小数，在这里必须大于 0：创建层时 dltutor 就拒绝 `eps=0`。PyTorch 2.13 构建 `BatchNorm1d(3, eps=0.0)` 时不会报错，但在训练模式下的第一次前向传播时拒绝它：`ValueError: batch_norm eps must be positive during training, but got 0.0`。

# %% [markdown] en="ae39c074"
# ## 为什么冻结的参数还会动
#
# “我冻结了它，可它还在变”通常意味着参数得到的是一个**全零**的梯度，而不是**没有**梯度。`step()` 不会跳过零梯度：它会加上权重衰减，并应用之前各步储存的动量。只有 `grad is None` 才会让优化器放过一个参数。在下面三种情形中，PyTorch 2.13 的 `SGD` 和 `Adam` 的表现都相同。
#
# ### 过时的动量
#
# 我们用带动量的优化器训练一层几步，然后用一个钩子把它的梯度清零来“冻结”它（一个梯度掩码）。

# %% [markdown] en="53c28572"
# 梯度为零时，动量规则给出 `buf = 0.9 * buf + 0`，更新量是 `-lr * buf`：这一层靠旧的动量继续滑行，每一步少一点。Adam 也会靠它的一阶矩 `exp_avg` 这样滑行（见本节末尾的“深入一步”）。

# %% [markdown] en="a9bf4567"
# ### 梯度为零时的权重衰减
#
# 耦合的权重衰减把 `weight_decay * p` 加到梯度上，所以零梯度仍会变成 `weight_decay * p`，每一步都把参数缩小为原来的 `1 - lr * weight_decay` 倍。

# %% [markdown] en="02f8fe90"
# ### 解决办法：没有梯度而不是零梯度
#
# 用 `requires_grad_(False)` 冻结（并像每个训练循环那样用 `zero_grad()` 清除旧梯度）：梯度是 None，所以既不施加动量也不施加衰减。

# %% [markdown] en="4bb8041b"
# ### 查明一个参数为什么更新或不更新
#
# 当一个参数表现异常时，按一份检查清单逐项排查：它在优化器中吗？它需要梯度吗？反向传播能到达它吗？它的有效学习率是多少？梯度裁剪（gradient clipping）是不是把它的梯度压没了（第 9 章）？动量或权重衰减会不会照样移动它？`dt.diagnose.why_not_updating(model, opt, name, loss=...)` 根据实时的对象回答每一个问题。下面的模型有六个分支，每个分支都埋了一个错误；它们并行读取同一个输入，输出加起来后送进一个输出层。

# %% [markdown] en="0c291701"
# 下面是每个分支权重的结论，并走一步加以验证；再下面是其中一个分支的完整检查清单（红色的行是问题；结论指出第一个问题）：

# %% [markdown] en="d326c796"
# ### 深入一步：Adam、None 还是零、手写的检查清单，以及参数表
#
# 零梯度下的 Adam，清除梯度之后留下什么，用各框架都有的名字手写的检查清单，对零梯度的结论，以及 `dt.diagnose.summary`。

# %% [markdown] en="9c6e3398"
# **零梯度下的 Adam** 靠它的一阶矩 `exp_avg` 继续滑行，就像 SGD 靠它的动量那样：

# %% [markdown] en="8079d641"
# **None 还是零：清除梯度之后留下什么**。`zero_grad()` 留下 None，这是 PyTorch 自 2.0 起的默认行为（`set_to_none=True`）。用 `zero_grad(set_to_none=False)` 时，梯度张量保留下来，里面是零，和 2.0 之前的 PyTorch 一样。Paddle 的 `opt.clear_grad()` 默认留下零（`set_to_zero=True`；`set_to_zero=False` 才留下 None）。dltutor 两种写法都有，各自沿用其框架的默认值。区别就是上面讲的那一点：零梯度照样会被动量和权重衰减推动，None 则不会，所以只有梯度为 None 时，被冻结的参数才真正不动。

# %% [markdown] en="3c6173fb"
# **在 PyTorch 中**没有 `why_not_updating`，也没有 `lr_mult` 或 `need_clip` 可查。PyTorch 中确实存在的那些问题，用十几行代码就能原样查出来（`named_parameters`、`param_groups`、`requires_grad` 和 `.grad` 在那里意思相同）。它能找出 PyTorch 中可能出现的四个错误。`mult_zero` 分支通过了它的检查：在 PyTorch 中不存在这种原因（在那里，倍数就是单独的一个参数组）。

# %% [markdown] en="da08faac"
# 上面那些零梯度的情况也能识别出来：结论会说明这个参数虽然梯度为零，却仍会移动，以及原因。

# %% [markdown] en="4d7a7117"
# **一眼看全**。`dt.diagnose.summary(model, opt)` 列出每个参数以及决定它命运的因素：是否需要梯度、它的 `lr_mult` 和 `need_clip`、所在的优化器参数组和有效学习率（优化器不持有它时为 `-`），以及可训练、已冻结和被排除的参数总数。

# %% [markdown] en="54331b70"
# 这张表不能显示一切：`detached` 分支在表中看起来完全正常，因为 `detach()` 写在前向代码中，而不在参数的设置里。只有 `why_not_updating(..., loss=loss)` 从损失出发沿计算图往回走，才能发现它。

# %% [markdown] en="c1073c0e"
# ## 只冻结一个张量的一部分
#
# `requires_grad` 属于整个张量，所以它没法让一个嵌入层（embedding layer）的某些行保持不变（比如你信得过的那些词的预训练向量），同时让其他行继续学习。**梯度掩码**能做到：在参数上注册一个钩子（hook），让梯度在冻结的行乘以 0、在其余的行乘以 1，这样反向传播之后的一切（裁剪、优化器）看到的都是掩码后的梯度。在每次反向传播之后把 `.grad` 的这些行清零，效果相同，但只在循环记得这样做的地方有效。
#
# 两种做法得到的仍然是零梯度，而不是“没有梯度”：`step()` 在零梯度上加的任何东西都会让这一行移动。`rows_moved` 把一个 6×3 的嵌入层训练六步，从第 `mask_from_step` 步起掩住第 0-2 行（用钩子，或把 `.grad` 清零），并报告冻结的行从那时起移动了多远。

# %% [markdown] en="8c933111"
# 六种设置，每种都用两种方式掩码（冻结的行移动的最大距离；0 表示它原地未动）：

# %% [markdown] en="f4ea02ad"
# 从第一步开始掩码时，无论用动量还是 Adam，冻结的行都纹丝不动：它们的动量（以及 Adam 的两个平均值）从零开始，之后收到的也只有零。有两件事会打破这一点，两种写法都一样（它们给出完全相同的数字）：
#
# * **权重衰减**：它在掩码之后才加到梯度上（`g = 0 + weight_decay * p`），在 AdamW 中则直接缩小参数，所以冻结的行会向零衰减；
# * **掩码开始得晚**：在掩码之前训练过的行带着动量，`step()` 会继续施加它，就像上面“过时的动量”一节那样。
#
# 所以梯度掩码的做法是：**从第一步就开始掩码**，把被掩码的张量放进一个**没有权重衰减**的参数组；如果要掩住一个已经训练过的张量，还要**把优化器动量中这些冻结行清零**（`opt.momentum_state` 给出这些条目的名字：SGD 是 `momentum_buffer`，Adam 和 AdamW 是 `exp_avg`）。也可以把张量拆开，让优化器根本不持有冻结的行（见下面的“深入一步”）。

# %% [markdown] en="0c99e663"
# ### 深入一步：五个种子下的表格、逐一检验的修正，以及拆分张量
#
# 用五个种子检查上面的表格（自由的行在每种设置中都在训练），把每种修正用在它所修复的设置上，以及永不泄漏的做法：把冻结的行存为缓冲区的模块。

# %% [markdown] en="786da65e"
# 下面是每种修正，各用在它所修复的设置上：

# %% [markdown] en="189a1b96"
# **永远不会漏的做法：把张量拆开**。把冻结的行存成缓冲区，只把自由的行作为参数，在 `forward` 中把它们拼起来。优化器从不持有冻结的行，所以动量、衰减或晚开始都碰不到它们（PyTorch 中也是同样的三个调用：`register_buffer`、`torch.cat` 和 `F.embedding`）。

# %% [markdown] en="59935dd0"
# ## 剪枝：把单个元素冻结在零上
#
# 模型压缩（model compression）最先用到的是**幅值剪枝**（magnitude pruning）：把绝对值最小的那些权重（比如一半）置为 0，其余的继续训练，最后以稀疏形式存储模型。它又是一种局部冻结：单个元素被冻结在零上，并且必须在优化器的每一步之后都留在那里。用一个与权重形状相同的**掩码**标出它们，剪掉的位置为 0，保留的位置为 1；下面的 `magnitude_mask` 生成这样一个掩码，`get_submodule` 按 `named_parameters()` 显示的名字取出要剪枝的层（这里是 `"0"`，在嵌套的模型中可以是 `"encoder.0"`）。
#
# `pruned_entries` 把网络训练三步，剪掉第一层权重的一半，再训练三步，并用下面四种方法之一保持这些零：
#
# * **zeros once**：把零写进权重，别的什么也不做；
# * **mask the gradient**：写入零，再加一个和上一节一样的梯度钩子；
# * **mask after each step**：写入零，并在每次 `opt.step()` 之后重新写一遍；
# * **weight_orig * mask**：这一层（下面的 `PrunedLinear`）把未剪枝的权重作为参数 `weight_orig`、把掩码作为缓冲区 `weight_mask` 保存起来，每次前向传播都把两者相乘。

# %% [markdown] en="7ce92741"
# 按列来读这张表。**只写一次的零保不住**：下一步又给每个被剪掉的元素一个梯度，`step()` 就会移动它，无论用哪种优化器。**每步之后重新写入零**在所有优化器下都成立，包括动量、权重衰减和 Adam：它抵消了这一步所做的一切。`weight_orig * mask` 也一样：无论 `weight_orig` 里是什么，它在被剪掉的位置上都是 0。**掩住梯度**在动量和 Adam 下会泄漏：网络在剪枝之前已经训练过，动量缓冲区为每个元素都存着一股推力（就像上面“过时的动量”那样）。训练中剪枝时，掩码只生成一次，再用这两种成立的方法之一保持这些零。

# %% [markdown] en="81b20a93"
# ### 深入一步：梯度掩码为什么会泄漏，以及各框架中的剪枝
#
# 梯度掩码什么时候够用，`weight_orig * mask` 确切保住了什么，一个框架自带的剪枝工具，以及用五个种子检查整张表。

# %% [markdown] en="690fcede"
# **梯度掩码什么时候够用**。只有除了梯度之外没有别的东西移动权重时，它才保得住这些零：普通的 SGD，以及权重衰减，因为它加上的 `weight_decay * p` 在恰好为 0 的元素上也是 0。用动量或 Adam 时，缓冲区（Adam 的 `exp_avg`）为每个元素都存着剪枝之前积累的一股推力，`step()` 也会把它施加到被掩住的元素上。只掩住梯度，仅在优化器还没有为被剪掉的元素积累任何东西时才够用：从第一步就开始掩码，或者先清掉它们的动量（上一节的做法）。
#
# **`weight_orig * mask` 确切保住的是**：前向传播所用的权重，以及 `weight_orig` 在被剪掉位置上的梯度（反向传播会把它乘以掩码，得 0）。`weight_orig` 自己在这些位置上的元素仍会移动，被储存的动量、权重衰减（这些元素还保留着原来的值）和 Adam 的平均值推着走；只是没有哪次前向传播会看到它们。
#
# **在 PyTorch 中**，这就是 `torch.nn.utils.prune` 的做法：在 PyTorch 2.13 中，先 `from torch.nn.utils import prune`，然后 `prune.l1_unstructured(layer, "weight", amount=0.5)` 把参数 `weight` 改名为 `weight_orig`（仍是同一个张量，所以剪枝之前创建的优化器仍持有它和它的状态），添加缓冲区 `weight_mask`，并注册一个前向预钩子（forward pre-hook），在每次前向传播之前把 `layer.weight` 重新算成两者的乘积。PyTorch 2.13 的 `SGD` 和 `Adam` 给出的零的分布与上表相同。`prune.is_pruned(model)` 告诉你 `model` 中是否有某一层带着这样的掩码；`prune.remove(layer, "weight")` 结束剪枝：参数重新叫作 `weight`（仍是同一个张量，现在存着 `weight_orig * weight_mask`，所以优化器保留它的状态），掩码和钩子都没有了。从此再没有什么保护这些零：下一步就会移动它们，就像第一列那样。只在最后一步之后、为了保存或发布模型时才移除剪枝。
#
# 用五个种子检查整张表：

# %% [markdown] en="826abead"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 参数不要梯度 | `p.requires_grad_(False)`、`module.requires_grad_(False)` | `p.requires_grad_(False)`、`module.requires_grad_(False)` | `p.stop_gradient = True`、`ParamAttr(trainable=False)` | 不把它放进 `gm.attach(...)` |
# | 逐参数的学习率倍数（learning-rate multiplier） | `p.lr_mult = 0.0` | —（一个 `lr=0` 的参数组） | `ParamAttr(learning_rate=0.0)` | —（一个 `lr=0` 的参数组） |
# | 参数组的学习率 | `opt.param_groups[i]["lr"]` | `opt.param_groups[i]["lr"]` | `opt.set_lr(...)`（整个优化器） | `opt.param_groups[i]["lr"]` |
# | 参数的优化器状态 | `opt.state[p]` | `opt.state[p]` | `opt.state_dict()`（累加器） | `opt._state[p]`（私有） |
# | 清除梯度 | `opt.zero_grad()`、`model.zero_grad()` | `opt.zero_grad()`、`model.zero_grad()` | `opt.clear_grad()`、`model.clear_gradients()` | `opt.clear_grad()` |
# | 训练 / 评估模式 | `model.train()`、`model.eval()` | `model.train()`、`model.eval()` | `model.train()`、`model.eval()` | `model.train()`、`model.eval()` |
# | 固定 BatchNorm 的统计量 | `BatchNorm1d(c, use_global_stats=True)` | —（每次 `model.train()` 之后再调用 `bn.eval()`） | `BatchNorm1D(c, use_global_stats=True)` | `BatchNorm2d(c, freeze=True)`（`weight` 和 `bias` 也一并冻结） |
# | 滑动平均统计量的动量 | `momentum=0.1`（批量的权重） | `momentum=0.1`（批量的权重） | `momentum=0.9`（旧值的权重） | `momentum=0.9`（旧值的权重） |
# | 冻结一个张量的某些行 | `p.register_hook(fn)`（0/1 掩码） | `p.register_hook(fn)` | `p.register_hook(fn)` | `gm.attach(p, callbacks=[fn])`（`fn(param, grad)` 返回梯度） |
# | 为什么它不更新？ | `dt.diagnose.why_not_updating(model, opt, name)` | — | — | — |
# | 参数一览表 | `dt.diagnose.summary(model, opt)` | —（`torchinfo`，第三方） | `paddle.summary(model, input_size)` | `megengine.utils.module_stats.module_stats(model, input_shapes=...)` |
#
# ## 小结
#
# **两句话**：只有为 None 的梯度才能让参数保持不动，零梯度、零学习率或不交给优化器，都会有某样东西继续运行。诊断工具根据实时的对象指出是哪一样。
#
# * `requires_grad_(False)` 是干净的冻结：没有梯度，所以 `step()` 完全跳过这个参数（没有动量、没有权重衰减、不计步）。学习率为 0 时，梯度和动量照样运转，所以解冻时这一层会猛地一跳；不交给优化器的层，梯度会不断堆积，除非用 `model.zero_grad()` 清除。
# * BatchNorm 的滑动平均统计量是缓冲区，在训练模式下由前向传播更新：`eval()` 让它停止更新，直到下一次 `train()`；`use_global_stats=True` 让它永久停止。这里（以及 PyTorch 中）的 momentum 0.1 是批量的权重；Paddle 的 0.9 是旧值的权重。
# * 零梯度不等于“没有梯度”：动量和权重衰减仍会移动参数。`dt.diagnose.why_not_updating` 根据实时的对象找出原因。
# * 一个张量的某些行：梯度掩码（`p.register_hook`）只有从第一步开始、且这个张量没有权重衰减时才能保住它们（掩码开始得晚时要清掉它们的动量）。
# * 剪枝后的权重不会自己保持为零：只写一次的零会被下一步抹掉。要么在每一步之后重新写入零，要么在前向传播中用 `weight_orig * mask` 算出权重。
#
# ## 练习
#
# 每道练习都有一个供你作答的单元格：把 `____` 换成你的答案，运行这个单元格，最后一行会检查它。`ex.q1.hint()` 给出一条提示（再调用一次给出下一条），`ex.q1.solution()` 显示一种答案，`exercises.progress()` 列出每道练习的完成情况。

# %% [markdown] en="f8a62f0a"
# **1.** `nn.BatchNorm1d(3, momentum=0.5)` 在训练模式下两次看到批量 `[[1, 2, 3], [3, 4, 5]]`。预测之后的 `running_mean`（`predicted_running_mean`），然后运行验证。

# %% [markdown] en="a31c547d"
# **2.** 再埋一个 bug：一个分支 `zeroed`，它的输出在求和之前乘以 0。对于使用 SGD 和动量 0.9 的情况，`dt.diagnose.why_not_updating` 对 `"zeroed.weight"` 给出什么 `cause`（`zero_branch_cause`）？走一步会改变它吗？

# %% [markdown] en="5f6dc240"
# **3.** `requires_grad_(False)` 和 `lr_mult = 0` 这两种方法中，哪一种在反向传播中仍会计算梯度，算出的又是什么？取一个新的 `make_net()`，用 `lr_mult = 0` 冻结 `net[0]`，用 `optim.SGD(net.named_parameters(), lr=0.05)` 走一次 `train_step`，把反向传播留在 `net[0].weight.grad` 里的东西存为 `grad_lr_mult`；再对另一个新的 `make_net()` 用 `requires_grad_(False)` 做同样的事（`grad_requires_grad`）。

# %% [markdown] en="50790fbd"
# **4.** 写一个函数 `freeze_block(model, name)`：让名为 `name` 的块（`"1"`、`"encoder"`，`named_modules()` 列出的任何名字）中的每个参数都停止训练，而且不再为它们计算梯度，模型的其余部分照常训练。检查时会冻结它自己编出来的网络中的块，并用冻结之前创建的优化器走一步。（`model.get_submodule(name)` 返回这个块，无论它嵌套得多深，剪枝一节就用过它。）

# %% [markdown] en="ce3c009d"
# **5.** 写一个函数 `masked_step(opt, weight, mask)`：让优化器 `opt` 走一步，之后 `weight` 在 0/1 张量 `mask` 为 0 的位置上恰好为 0，而其余每个元素都走 `opt.step()` 给它的那一步。检查时会对分别用 SGD（带动量和权重衰减）和 Adam 训练过的权重剪枝，并连续几步调用你的函数。

# %% [markdown] en="af8c245a"
# **6.** （不检查：一个实验。）在解冻实验中（第一节的“深入一步”），用 `lr=0` 的参数组代替 `lr_mult = 0` 来冻结 `net[0]`，检查跳跃是否相同；然后在解冻时重置动量（对 `net[0]` 的每个参数执行 `opt.state.pop(p, None)`），说明第一次更新是普通的第一步。
