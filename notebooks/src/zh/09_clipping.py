# %% [markdown] en="6d0922a6"
# # 梯度裁剪与数值问题
#
# **约 30 分钟**。学完本章，你将能够：
#
# * 按值、按每个张量的范数或按全局范数裁剪梯度，并让某些参数不参与裁剪；
# * 找到 NaN 最早出现的运算；
# * 用混合精度（mixed precision）训练：层用 float16 计算，配上损失缩放器，并在 `unscale_` 之后裁剪；
# * 一步一步检查训练为什么不收敛。
#
# 时不时会有一个批量产生比平常大几百倍的梯度，一步就把权重甩得很远，训练再也恢复不过来——或者损失变成 `inf`，接着变成 `nan`。**梯度裁剪**（gradient clipping）在优化器使用梯度之前限制它的大小：PyTorch 的做法是调用函数，Paddle 的做法是把裁剪对象交给优化器。

# %% [markdown] en="ccdfe54d"
# ## 三种裁剪梯度的方式
#
# 先用一个小网络和一个批量得到一组要裁剪的梯度。我们保存一份副本，让每种方法都从完全相同的数开始。**全局范数**（global norm）是把所有梯度连成一个向量后的范数：各张量范数的平方和再开平方。

# %% [markdown] en="a4caf1ed"
# ### PyTorch 风格：在 backward 和 step 之间对 .grad 调用函数
#
# * `optim.clip_grad_value_(params, v)` 把每个梯度值截断到 `[-v, v]` 之内；
# * `optim.clip_grad_norm_(params, max_norm)` 用同一个因子缩放**所有**梯度，使它们的全局范数不超过 `max_norm`，结果会比 `max_norm` 略小一丝（见下面的“深入一步”），并返回裁剪之前的全局范数（便于记录）；
# * 逐个张量裁剪在 PyTorch 中没有专门的函数：对每个参数各调用一次 `clip_grad_norm_`。
#
# 它们原地修改 `p.grad`，所以要在 `backward()` 之后、`opt.step()` 之前调用。

# %% [markdown] en="863a64db"
# ### Paddle 风格：把裁剪对象交给优化器
#
# Paddle 在优化器内部裁剪：你创建一个裁剪对象——`optim.ClipGradByValue(max)`（把每个值截断到 `[-max, max]`）、`optim.ClipGradByNorm(clip_norm)`（逐个张量）或 `optim.ClipGradByGlobalNorm(clip_norm)`——并作为 `grad_clip=` 传入。这样每次 `opt.step()` 都会先裁剪再更新。dltutor 的优化器裁剪的是**它自己的副本**：更新用的是裁剪后的梯度，而 `p.grad` 保持反向传播（backpropagation）留下的样子。裁剪对象还会记住它在上一步做了什么：`last_total_norm`（裁剪前的全局范数）、`last_clipped_norm`（裁剪后）和 `last_scale`（裁剪后 / 裁剪前），它等于 `clip_norm / max(global_norm, clip_norm)`：这是 Paddle 的公式，没有 epsilon。
#
# Paddle 的中文文档：[ClipGradByGlobalNorm](https://www.paddlepaddle.org.cn/documentation/docs/zh/api/paddle/nn/ClipGradByGlobalNorm_cn.html) 的 API 页面，以及把三种裁剪方式放在一起讲的[梯度裁剪指南](https://www.paddlepaddle.org.cn/documentation/docs/zh/guides/advanced/gradient_clip_cn.html)。

# %% [markdown] en="476e5393"
# 裁剪对象也是一个普通的函数：用参数和一组梯度数组调用它，它会原地裁剪这些数组，所以我们可以检查两种风格是否一致（差别只在 PyTorch 的 epsilon：见下面的“深入一步”）。

# %% [markdown] en="f3fcc182"
# ### 深入一步：PyTorch 的 epsilon，以及不大于 0 的阈值
#
# 两种风格相差的那一丝，以及 PyTorch 遇到不大于 0 的阈值时会怎样。

# %% [markdown] en="b894c03d"
# `clip_grad_norm_` 用 PyTorch 的公式 `max_norm / (total + 1e-6)` 计算缩放因子，所以结果会比 `max_norm` 略小一丝；Paddle 的公式没有 epsilon。在 float32 中，这个 epsilon 藏在舍入误差里：它让范数变化 `1e-6 / (total + 1e-6)`，这里约为 `7e-7`，和 float32 的舍入误差一样大。在 float64 中它就显现出来了。把同一组梯度转成 float64，用两种方式裁剪：PyTorch 的公式（`clip_grad_norm_`）得到的范数比 1 小 `1e-6 / (total + 1e-6)`，Paddle 的公式（`ClipGradByGlobalNorm`，没有 epsilon）正好落在 1 上。

# %% [markdown] en="b0b55e02"
# 阈值必须是一个大于 0 的数。无论 `max_norm` 是多少，PyTorch 2.13 都按 `max_norm / (total + 1e-6)` 计算缩放因子，所以 `max_norm=-1` 会悄悄翻转每个梯度的符号（训练于是朝损失增大的方向走），`max_norm=0` 会把它们清零；dltutor 在碰任何梯度之前就拒绝这两种情况。

# %% [markdown] en="59183e68"
# ## 几种裁剪在同一组梯度上有什么不同
#
# 三种方法都让梯度变小，但方式不同。下面是每种方法前后各张量的范数，以及把梯度看作一个向量时，裁剪后与原始梯度之间的余弦相似度（1 表示方向相同）。

# %% [markdown] en="bc166e59"
# * **全局范数**把所有梯度乘以同一个数（这里是 0.68）：每个张量按相同的比例缩小，所以整个梯度保持方向不变。只有步长变了。
# * **逐张量范数**只缩小超过阈值的张量（三个权重），各用各的因子，偏置则不动：每个张量保持自己的方向，但整个梯度转了向。
# * **按值裁剪**截断单个数：在同一个张量中，大的元素被截断、小的保留，所以连单个张量的方向都会改变。

# %% [markdown] en="3fdc0fb0"
# 该用哪一种？全局范数裁剪是通常的选择（大多数论文和代码中说的“梯度裁剪”就是它）：它保持方向，只限制步长。逐张量裁剪分别限制每一层，按值裁剪是最粗暴的工具。
#
# ### 让某些参数不参与裁剪
#
# 每个参数都有 `need_clip`（Paddle 的 `ParamAttr(need_clip=...)`）。交给优化器的裁剪对象会跳过 `need_clip=False` 的参数：它们的梯度既不计入全局范数，也不被缩放。这里我们让所有偏置都不参与。PyTorch 风格的函数裁剪你传给它的一切，所以在那里，不想裁剪的参数就不要传进去（下面第二个单元格验证这样得到的梯度相同）。

# %% [markdown] en="a77e086d"
# ### 深入一步：图中的几种裁剪，以及让训练停下来的裁剪
#
# 把按值裁剪和按范数裁剪画出来，用的是一个小梯度和我们网络的梯度；还有把 `1e5` 误写成 `1e-5` 的阈值。

# %% [markdown] en="c6de75f9"
# **同一件事的两幅图**。左边，一个有两个元素的梯度 `(3, 0.5)`，分别按值裁剪到 1 和按范数裁剪到 1：按值裁剪把它转向了对角线。右边，我们网络的梯度在每种方法之后各张量的范数。

# %% [markdown] en="e5c42222"
# **让训练停下来的裁剪**。把 `1e5` 误写成 `1e-5` 的阈值会把每个梯度都缩到范数 0.00001：参数几乎不动，而且什么也不会报错。第 8 章的 `dt.diagnose.why_not_updating` 也认得这个原因：它算出裁剪会对每个梯度施加的缩放比例，低于百万分之一就判为“被裁剪到几乎为零”：

# %% [markdown] en="3da58bff"
# ## 我的 NaN 损失从哪里开始
#
# NaN（“不是一个数”）从来不会凭空出现：某个运算从有限的输入产生了 `inf` 或 `nan`，之后的每个运算都把它传了下去。常见的第一个出问题的运算：0 的对数、除以 0、大数的 `exp`，以及因为学习率（learning rate）太大而超出 float32 范围（约 `3.4e38`）的数。
#
# ### 对下溢为 0 的概率取对数
#
# 一个在从未标准化过的特征（值高达 40）上训练的分类器，交叉熵用手写的 `-log(softmax(logits)[label])`。（`np.errstate` 让 NumPy 的警告安静下来；`nonfinite="apply"` 让优化器像 PyTorch 那样用 NaN 梯度走一步，而 dltutor 默认会拒绝这一步。）

# %% [markdown] en="a89501d5"
# 第二步的损失是 `inf`，之后一切都是 `nan`，包括权重。在 `dt.detect_anomaly()` 之内，每个运算都会在前向和反向传播中检查自己的输出，第一个产生 NaN 或 Inf 的运算会抛出 `dt.AnomalyError`，报出自己的名字和输入。我们捕获这个错误并打印出来。

# %% [markdown] en="fc2f1c75"
# 罪魁祸首是 `log`，它的输入是有限的：给它的概率恰好是 0。第一步之后，logits 拉得太开，差值的 `exp` 在 float32 中下溢为 0，而 `log(0) = -inf`。（其他框架的检查，以及只是受害者的运算：见本节末尾的“深入一步”。）

# %% [markdown] en="8af3cbc5"
# 解决办法是永远不要对 softmax 取对数：`F.log_softmax` 先减去最大的 logit，再计算与 `log(softmax(z))` 相同的数，所以什么都不会下溢，`F.cross_entropy` 用的就是它。在朴素公式有限的地方，两者一致。用 `F.cross_entropy` 时，训练保持有限，不过它的第二个损失仍然很大：真正的问题在于输入的尺度，把特征标准化也能解决这个问题。

# %% [markdown] en="0249b664"
# ### 深入一步：只是受害者的运算，以及更多 NaN 检查
#
# 学习率太大时溢出的权重，PyTorch 和 Paddle 的检查，以及 `error_if_nonfinite`。

# %% [markdown] en="e8b8b06c"
# **学习率太大导致权重溢出**。并不是每个 NaN 都从该负责的那个运算开始。一个学习率太大的线性回归：每一步越过最小值的幅度都比上一步更大，权重按几何级数增长，几十步之后，平方误差就超出了 float32 的范围。一个 `Recorder`（下一节用得更多）跟踪参数范数。

# %% [markdown] en="aef6e7e6"
# 异常检测（anomaly detection）指向了损失（`mse_loss`），第一个 `inf` 出现在那里，但这个运算只是受害者。曲线讲出了真相：权重范数每一步都按同样的比例增长，在对数坐标上是一条直线，而且每次更新都比权重本身还大：更新量与参数之比，即更新比（update-to-parameter ratio），大于 1。这正是学习率太大的典型特征。

# %% [markdown] en="aee92de7"
# PyTorch 的 `torch.autograd.detect_anomaly()` 不会在上面的 `log` 处停下。在 PyTorch 2.13 中，它只检查每个反向函数返回的结果，而且只查 NaN：`log` 产生的 `-inf` 顺利通过前向传播，同样的朴素交叉熵要到反向传播中再晚一个运算才停下，报错 `Function 'SoftmaxBackward0' returned nan values in its 0th output.`（softmax 的反向把 `inf` 梯度乘以 0）。Paddle 3.3 的 `paddle.set_flags({"FLAGS_check_nan_inf": 1})` 会在前向和反向中检查每个运算的输出是否含有 NaN 和 Inf，和 `dt.detect_anomaly()` 一样。
#
# 另外两个工具：对每个参数检查 `np.isfinite(p.numpy()).all()`，可以找到第一个出问题的参数；`optim.clip_grad_norm_(params, max_norm, error_if_nonfinite=True)` 会在梯度中一出现 NaN 或 Inf 就报错（PyTorch 的 `clip_grad_norm_` 也有这个开关，默认关闭：它抛出的 `RuntimeError` 说总范数“is non-finite”）。异常检测会在每个运算之后（前向和反向）都加一次检查：追查时打开，查完再关掉。

# %% [markdown] en="8be0657b"
# ## 训练不收敛时
#
# 有两个习惯能让下面的每项检查都发挥作用：
#
# * **从一个能工作的基线开始**（公开的方案、同一个模型在更简单问题上的表现，或者下面的单个小批量测试），并记录下它的损失曲线。没有基线，你就分不清“坏了”和“慢了”。
# * **一次只改一样东西**，并与基线比较：同时改两样，它们可能相互抵消或相互掩盖。
#
# **批量大小**就是这样一个因素，而且它和学习率连在一起：批量越小，梯度的噪声越大，所以原本合适的学习率现在可能太大了。把批量减半时，先试试更小的学习率，再去怪模型。
#
# 然后按下面的顺序检查，代价最小的在前：
#
# 1. **数据和标签**。标签对吗，与输入对得上吗（打乱了的 `X` 配上没打乱的 `y`，什么也学不到）？特征标准化了吗，就像 NaN 的例子那样？
# 2. **模型能过拟合一个小批量吗**？用几个样本，损失应该能降到接近 0。如果做不到，就是模型、损失或训练循环坏了。
# 3. **学习率**。太大：损失上下跳动或爆炸。太小：几乎不动。试试相差 10 倍的几个值。
# 4. **初始化的尺度**。激活值和梯度应该在各层之间大致保持同样的大小（见第 3 章的 `plot.layer_statistics`）。
# 5. **梯度范数**。尖峰、持续增长、NaN，或者梯度几乎为 0 的层。
# 6. **更新量与参数之比**。在健康的训练中，每步的 `||update|| / ||parameter||` 约为 `1e-3`；接近 1 时，权重每一步都被重写，远小于它时，权重几乎不动。
#
# 下面在一个小而健康的网络和八个点上做第二项检查：

# %% [markdown] en="37318943"
# ### 深层网络中的梯度爆炸
#
# 现在来看一个完全训练不了的网络：六个 ReLU 层，权重按 Kaiming 规则的两倍来抽取（第 3 章），每一步都在整个数据集上用带动量（momentum）的 SGD 对两个月牙做分类。一个 `Recorder` 在每一步记录每层的梯度范数、更新量范数和参数范数（`by="layer"` 把一层的权重和偏置加在一起；`log_loss` 把损失交给它）。当损失不再是一个数时，循环就停下，训练脚本也应该这样做。
#
# `nonfinite="apply"` 让优化器像 PyTorch 那样，梯度中含有 NaN 或 Inf 时照样走这一步，好让我们看到爆炸的过程（dltutor 默认会拒绝这一步：见本节末尾的“深入一步”）。

# %% [markdown] en="1606a795"
# 曲线说明了什么：
#
# * **梯度范数**从第一步起就有几百（这么大的健康网络起步时约为 1）：前向传播时信号在六层中的每一层都翻倍，反向传播时梯度也以同样的方式增长；
# * **更新比**一开始就约为 1，是 `1e-3` 这个经验值的一千倍：每一步都把权重重写一遍；
# * 于是**参数范数**不断增长，这又让下一个梯度更大。梯度爆炸（exploding gradients）会自我加剧：**损失**增长许多个数量级，几步之后就变成 `nan`。

# %% [markdown] en="6652f179"
# ### 同一个网络加上全局范数裁剪
#
# 我们把 `optim.ClipGradByGlobalNorm(1.0)` 交给优化器，从同样的初始权重重新训练。现在任何一步都不会长于 `lr x 1`（动量 0.9 时约为它的十倍）。

# %% [markdown] en="2d5f2f62"
# 裁剪后的梯度（虚线）从不超过 1，而裁剪前的梯度一开始有几百；随着网络稳定下来，它的梯度降到阈值以下，裁剪就不再起作用。损失下降了几个数量级，网络学会了月牙，隐藏层的更新比保持在 `1e-2` 以下。裁剪治的是症状：这里真正的疗法是合理的初始化（第 3 章；试试 `gain=1.0`）。它是一张安全网，防止偶尔一个坏批量毁掉许多好批量的成果。（几十步之后，你的曲线可能和保存的不同：另一种 CPU 对每次矩阵乘法结果最后几位的舍入不同。下面“深入一步”中对五个种子的检查在每台机器上都成立。）

# %% [markdown] en="f01babff"
# ### 深入一步：五个种子，小批量的噪声，以及 dltutor 拒绝的一步
#
# 用五个种子检查上面的两次训练，测量批量大小带来的噪声，再看 dltutor 默认怎样处理 NaN 梯度。

# %% [markdown] en="fe71747b"
# **五个种子**。不裁剪时的爆炸和裁剪后的挽救都不是种子带来的运气：这里对种子 0 到 4 逐一检查。

# %% [markdown] en="8f24dd17"
# **批量越小，梯度噪声越大**。一个批量的梯度是它所含样本的平均，所以它在批量之间的离散程度按 1 / √批量大小 缩小。从 200 个正弦点中随机抽取各四十个大小为 8 和 64 的批量，第一层权重梯度的离散程度：

# %% [markdown] en="bc9c1f4a"
# **dltutor 默认的做法：拒绝有毒的一步**。在 PyTorch 中，一个梯度里的一个 `nan` 会直接进入权重（除 Rprop 以外的优化器都照样走这一步），用全局范数裁剪时还会进入每一个权重：全局范数是 `nan`，每个缩放后的梯度也是。（一个 `inf` 会让全局范数成为 `inf`、缩放因子成为 0：这个梯度变成 `nan`，其他梯度都变成 0。）dltutor 的优化器在改变任何东西之前先检查梯度：在默认的 `nonfinite="raise"` 下，这一步会抛出 `optim.NonFiniteGradientError`，指出是哪些参数，并让模型保持上一个正常步之后的样子。（`nonfinite="skip"` 会默默跳过这样的步并在 `opt.skipped_steps` 中计数；PyTorch 混合精度训练中的 `GradScaler.step()` 也会跳过这样的步，随后的 `scaler.update()` 再把损失缩放因子减半。）PyTorch 照单全收的东西，dltutor 有几处会拒绝，这是其中之一。
#
# 你自己写进权重的 NaN 或无穷大（`set_value`、`init.assign_`、加载的检查点）则不同：它会原样保留，就像 PyTorch 保留你复制进去的值一样，因为值就是数据，dltutor 不去猜你的用意。它把守的是之后的那一步：NaN 让梯度变成 NaN，`step()` 会拒绝这些梯度，并指出是哪个参数（见下面第二个单元格的最后几行）。

# %% [markdown] en="51f5d986"
# ## 混合精度：损失缩放器，以及裁剪放在哪里
#
# float16 让数组的内存减半，在 GPU 上做矩阵乘法也快好几倍，但它只有大约三位有效数字，最大到 65504，最小到约 6e-8。梯度常常比这还小：用 float16 计算时它们会变成恰好为 0，权重就此停止学习，却不报任何错。所以混合精度把参数和它们的梯度保留在 float32 中（这份 float32 的参数叫作主权重，master weights），而用 float16 计算各层。这里是手工完成的：激活值和权重用 `.to(dt.float16)` 转换，输出在进入损失之前再用 `.float()` 转回来。
#
# 解决办法：在 `backward()` 之前把损失乘以一个大数 S（这样每个梯度都大了 S 倍，被抬进 float16 的范围），之后再在 float32 中把梯度除以 S。（一个故意做得很小的损失能同时展示这个问题和解决办法：见下面的“深入一步”。）

# %% [markdown] en="00acd6ff"
# `optim.GradScaler` 每一步都做这件事，语义与 PyTorch 相同：`scaler.scale(loss)` 把损失乘以缩放因子 S（起始为 65536）；`scaler.step(opt)` 把梯度除以 S，再调用 `opt.step()`；`scaler.update()` 为下一步调整 S。**裁剪放在 `backward()` 和 `step()` 之间，并且在 `scaler.unscale_(opt)` 之后**，它会提前除以 S：如果在那之前裁剪，裁剪看到的梯度大了 S 倍，就把它们缩小同样的倍数，之后 step 还会再除一次 S。下面把一次带裁剪的更新按两种顺序各做一次（这里 S = 1024），并与 float32 中的同一步对照：

# %% [markdown] en="7a45c454"
# ### 深入一步：float16 丢掉的梯度，以及损失缩放器怎样选定缩放因子
#
# 损失缩放在一个很小的损失上的效果，S 在溢出后怎样减小、又怎样重新增大，以及 `GradScaler` 还有哪些地方与 PyTorch 相同。

# %% [markdown] en="db819b8b"
# **float16 丢掉的梯度**。一个故意做得很小的损失（乘以 1e-8）：在 float16 的层中计算时，它的梯度恰好变成 0，而损失缩放把它找了回来。

# %% [markdown] en="126baf9c"
# **S 怎样自己选定**。缩放因子太大反而会溢出：某个梯度在 float16 的反向传播中超过 65504，变成 inf。这时 `scaler.step` 跳过 `opt.step()`（权重保持原样），`scaler.update()` 把 S 减半；连续 `growth_interval` 步（默认 2000，下面是 3）没有问题后，它再把 S 加倍。从高得离谱的 2^24 开始，S 一路下降，直到反向传播不再溢出，然后不断尝试往上再走一步：它始终停在不溢出的最大缩放因子附近。其余的也和 PyTorch 一样：每一步最多调用一次 `unscale_`（第二次调用会报错，第二次 `step` 也是），float16 的参数会被拒绝（主权重要保留在 float32），`scaler.state_dict()` 保存 S 和它的计数器，供检查点使用。
#
# 与 GPU 上的混合精度不同之处：这里没有 autocast（在哪里转换由你决定），而 NumPy 在 CPU 上计算 float16 时没有专门的硬件，所以在这里它不省时间。它展示的是数值行为，这一点是相同的。PyTorch 的 `torch.autocast` 逐个运算做同样的转换选择：在 `torch.autocast("cpu", dtype=torch.float16)` 之内，Linear 的输出是 float16，`mse_loss` 的输出是 float32，权重的梯度是 float32，和上面的单元格一样。

# %% [markdown] en="fbce45e1"
# ## 各框架中的叫法
#
# | 概念 | dltutor | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- |
# | 按值裁剪（函数） | `optim.clip_grad_value_(params, v)` | `torch.nn.utils.clip_grad_value_(params, v)` | `paddle.nn.utils.clip_grad_value_(params, v)` | `megengine.optimizer.clip_grad_value(params, lower, upper)` |
# | 按全局范数裁剪（函数） | `optim.clip_grad_norm_(params, max_norm)` | `torch.nn.utils.clip_grad_norm_(params, max_norm)` | `paddle.nn.utils.clip_grad_norm_(params, max_norm)` | `megengine.optimizer.clip_grad_norm(params, max_norm)` |
# | 按值裁剪（在优化器中） | `SGD(..., grad_clip=optim.ClipGradByValue(max))` | — | `SGD(..., grad_clip=paddle.nn.ClipGradByValue(max))` | — |
# | 按每个张量的范数裁剪 | `grad_clip=optim.ClipGradByNorm(clip_norm)` | —（对每个参数调用 `clip_grad_norm_`） | `grad_clip=paddle.nn.ClipGradByNorm(clip_norm)` | — |
# | 按全局范数裁剪（在优化器中） | `grad_clip=optim.ClipGradByGlobalNorm(clip_norm)` | — | `grad_clip=paddle.nn.ClipGradByGlobalNorm(clip_norm)` | — |
# | 让某个参数不参与裁剪 | `p.need_clip = False` | —（不传入它） | `ParamAttr(need_clip=False)` | —（不传入它） |
# | 找出产生 NaN 的运算 | `with dt.detect_anomaly():` | `with torch.autograd.detect_anomaly():`（只查反向传播中的 NaN，见下文） | `paddle.set_flags({"FLAGS_check_nan_inf": 1})` | — |
# | 数值稳定的 softmax 对数 | `F.log_softmax`、`F.cross_entropy` | `F.log_softmax`、`F.cross_entropy` | `F.log_softmax`、`F.cross_entropy` | `F.logsoftmax`、`F.nn.cross_entropy` |
# | 为 float16 缩放损失 | `optim.GradScaler()` | `torch.amp.GradScaler()` | `paddle.amp.GradScaler()` | `megengine.amp.GradScaler()`、`scaler.backward(gm, loss)`（从 16 开始） |
# | 记录训练曲线 | `dltutor.trace.Recorder(model, opt)` | —（钩子、TensorBoard） | —（VisualDL） | — |
#
# `torch.autograd.detect_anomaly()` 查得比另外两个少：PyTorch 2.13 只在某个反向函数返回 NaN 时报错，所以 Inf 会悄悄通过。要在 PyTorch 中抓住它，得自己检查 `torch.isfinite(t).all()`：对输出直接检查，对梯度则在钩子（`t.register_hook(fn)`）中检查。Paddle 的这个标志会检查每个运算的输出是否含有 NaN 和 Inf。
#
# ## 小结
#
# **两句话**：裁剪限制一步能走多远，全局范数裁剪做到这一点而不改变梯度的方向。NaN 或溢出都有一个最先出问题的运算，本套件的工具能在它扩散之前指出它。
#
# * 在 `backward()` 之后、`step()` 之前用 `clip_grad_value_` / `clip_grad_norm_` 裁剪（它们修改 `.grad`），或者把 `ClipGradByValue` / `ClipGradByNorm` / `ClipGradByGlobalNorm` 作为 `grad_clip=` 交给优化器（它裁剪自己的副本：`.grad` 不变，而 Paddle 的 `ClipGradByGlobalNorm` 会原地缩放 `.grad`）。
# * 全局范数裁剪用同一个因子缩放所有梯度并保持方向；逐张量裁剪改变张量之间的相对大小；按值裁剪甚至会改变单个张量内部的方向。`need_clip=False` 让一个参数不受裁剪对象的影响。
# * NaN 始于某个输入有限的运算。`dt.detect_anomaly()` 会指出它（对 0 取对数：用 `log_softmax` / `cross_entropy`）；如果这个运算只是受害者，曲线会告诉你原因。
# * 训练不收敛时，先检查数据，再过拟合一个批量，然后看学习率、初始化、梯度范数和更新比。
# * 混合精度用 float16 计算，但保留 float32 的主权重；损失缩放器（`optim.GradScaler`）不让小梯度变成 0。在 `scaler.unscale_(opt)` 之后再裁剪。
#
# ## 练习
#
# 每道练习都有一个供你作答的单元格：把 `____` 换成你的答案，运行这个单元格，最后一行会检查它。`ex.q1.hint()` 给出一条提示（再调用一次给出下一条），`ex.q1.solution()` 显示一种答案，`exercises.progress()` 列出每道练习的完成情况。

# %% [markdown] en="ebc8edbe"
# **1.** `by_tensor_norm` 是按 PyTorch 的方式裁剪的，对每个参数调用一次 `clip_grad_norm_`。创建在优化器内部做同样事情的裁剪对象（`tensor_clip`）。

# %% [markdown] en="50b2a176"
# **2.** 预测：用 `optim.ClipGradByGlobalNorm(2.0)` 裁剪原始梯度之后，`clip.last_scale` 是多少？换成 `optim.ClipGradByGlobalNorm(0.5)` 又是多少？根据本章开头打印的全局范数算出这两个值，按先 2.0 后 0.5 的顺序写成一对数放进 `predicted_scales`，然后运行这两个裁剪来验证。

# %% [markdown] en="41df9728"
# **3.** 让 `net` 的最后一层不参与裁剪（对 `"4.weight"` 和 `"4.bias"` 设置 `need_clip = False`），用 `ClipGradByGlobalNorm(1.0)` 裁剪原始梯度，把它的 `last_total_norm` 放进 `norm_without_last`。它计算了哪些层？（之后把 `need_clip` 改回 `True`。）

# %% [markdown] en="c5f1eab3"
# **4.** `v = dt.tensor([0.0, 4.0], requires_grad=True)`，然后在 `dt.detect_anomaly()` 中执行 `dt.sqrt(v).sum().backward()`。异常检测首先指出哪个运算（`bad_op`），是在哪一次传播中，`"forward"` 还是 `"backward"`（`bad_pass`）？先预测，再运行。（在 PyTorch 2.13 中，同样的几行——在 `torch.autograd.detect_anomaly()` 中执行 `torch.sqrt`——什么错误也不会报：这里没有哪个运算产生 NaN，而 PyTorch 只检查反向函数返回的 NaN。在 PyTorch 中，可以用钩子 `v.register_hook(fn)`，在 `fn` 中检查 `torch.isfinite(grad).all()`，就能找到它。）

# %% [markdown] en="fc4f2444"
# **5.** `ClipGradByNorm(0.5)` 会缩小 `net` 的哪些参数？用裁剪对象的 `predict_scales`（而不是真的裁剪）找出来，把它们的名字列在 `shrunk` 中。

# %% [markdown] en="91e63786"
# **6.** 自己动手写 `clip_global_norm(params, max_norm)`，用 NumPy 处理每个 `p.grad`：它要做的和 `optim.clip_grad_norm_(params, max_norm)` 一样（当全局范数高于 `max_norm` 时，用同一个因子缩放所有梯度；没有梯度的参数不去动它；返回裁剪之前测得的全局范数）。检查时会在它自己的梯度上把你的函数和 `clip_grad_norm_` 作比较。
