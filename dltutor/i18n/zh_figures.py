"""The chapters' own figure texts in Chinese, keyed by the English text the chapter's code draws.

The chapters draw their figures in English code (``ax.set_title("Two warmups into the same
cosine")``); the Chinese notebooks run that same code, and ``plot.show()`` puts each title, axis
label, legend entry and free text through this table before the figure is shown (see
``dltutor/plot/language.py``). A key with ``{name}`` fields is a template: ``"clipped at
{threshold}"`` matches ``"clipped at 1.0"`` and gives ``"裁剪阈值 1.0"``, so a learner who
changes the number still gets Chinese. A text that is code (``ClipGradByGlobalNorm(1.0)``,
``net[0].weight``) needs no entry: it reads the same in both editions.

The words follow the glossary (``notebooks/zh/GLOSSARY.md``): 阻断梯度 for detach, 更新比, 轮
for an epoch, 层 {name} for a layer.
"""

WORDS: dict[str, str] = {
    # shared by several chapters
    "epoch": "轮",
    "optimizer step": "优化器步数",
    "gradient norm": "梯度范数",
    # 01: random numbers, and which parameters get a gradient
    "dt.rand: uniform on [0, 1)": "dt.rand：[0, 1) 上的均匀分布",
    "dt.randn: normal, mean 0, std 1": "dt.randn：正态分布，均值 0，标准差 1",
    "value": "取值",
    "count": "个数",
    "no cut": "不阻断",
    "detach at stage2's output": "在 stage2 的输出处阻断梯度",
    "stage2 frozen": "冻结 stage2",
    "Which parameters get a gradient (x = None)": "哪些参数得到梯度（x 表示梯度为 None）",
    # 02: a weight and its gradient
    "input feature": "输入特征",
    "hidden unit": "隐藏单元",
    # 03: the scale of outputs and gradients
    "default: U(±1/sqrt(fan_in))": "默认：U(±1/sqrt(fan_in))",
    "fixed range: U(±0.1)": "固定范围：U(±0.1)",
    "fan_in (inputs per output)": "fan_in（每个输出的输入个数）",
    "std of the layer's output": "该层输出的标准差",
    "One Linear layer, inputs with std 1": "一个 Linear 层，输入的标准差为 1",
    "weight value": "权重的值",
    "count (log scale)": "个数（对数刻度）",
    "The custom initializer on a 200 x 200 weight": "自定义初始化器作用于 200 x 200 的权重",
    "normal, std 1": "正态分布，标准差 1",
    "normal, std 0.01": "正态分布，标准差 0.01",
    "default (U(±1/sqrt(fan_in)))": "默认（U(±1/sqrt(fan_in))）",
    "Xavier, gain 5/3": "Xavier，增益 5/3",
    "Xavier, gain 1": "Xavier，增益 1",
    "Kaiming, gain sqrt(2)": "Kaiming，增益 sqrt(2)",
    "{activation} network: std of each block's output": "{activation} 网络：每个块输出的标准差",
    "{activation} network: std of the gradient (backward runs right to left)":
        "{activation} 网络：梯度的标准差（反向传播从右往左）",
    # 05: the tied layer
    "Parameter norm per layer (layer 2 = the shared one)": "参数范数（逐层；层 2 是绑定的那一层）",
    "Gradient norm per layer": "梯度范数（逐层）",
    # 07: learning rates in training
    "Update size per layer: the fc group's lr is set to 0 after epoch 2":
        "更新量（逐层）：第 2 轮之后全连接组的学习率设为 0",
    "LinearWarmup + cosine": "LinearWarmup + 余弦",
    "epoch (one scheduler.step() per epoch)": "轮（每轮一次 scheduler.step()）",
    "SequentialLR: LinearLR(0.01),\nthen cosine": "SequentialLR：LinearLR(0.01)，\n然后余弦",
    "Two warmups into the same cosine": "两种预热，接上同一个余弦",
    "lr after sched.step(val_loss)": "sched.step(val_loss) 之后的学习率",
    "ReduceLROnPlateau: the lr follows the loss": "ReduceLROnPlateau：学习率随损失而变",
    "validation loss (dots)": "验证损失（圆点）",
    "Warmup for 3 epochs, then the lr follows the loss": "预热 3 轮，之后学习率随损失而变",
    # 08: two ways to freeze
    "frozen with requires_grad_(False)": "用 requires_grad_(False) 冻结",
    "frozen with lr_mult = 0": "用 lr_mult = 0 冻结",
    # 09: clipping
    "original": "原始梯度",
    "by value (1)": "按值裁剪（1）",
    "by norm (1)": "按范数裁剪（1）",
    "one gradient, two entries": "一个梯度，两个元素",
    "value (0.1)": "按值（0.1）",
    "tensor norm (0.5)": "按张量范数（0.5）",
    "global norm (1.0)": "按全局范数（1.0）",
    "gradient norm of the tensor": "该张量的梯度范数",
    "per-tensor norms after each method": "各方法裁剪后每个张量的范数",
    "no clipping (stopped)": "不裁剪（已停止）",
    "log2 of the scale S it ran with": "这一次迭代所用缩放因子 S 的 log2",
    "overflow: step skipped, S halved": "溢出：跳过这一步，S 减半",
    "iteration": "迭代次数",
    # 10: resuming from a checkpoint
    "uninterrupted": "不中断",
    "resumed with everything": "恢复全部状态后继续",
    "resumed without the optimizer state": "不恢复优化器状态就继续",
    " checkpoint": " 检查点",
    "loss of the mini-batch": "小批量的损失",
    "Resuming exactly, and with a fresh optimizer": "精确恢复，以及换一个新优化器恢复",
    # 11: where the memory goes
    "parameters": "参数",
    "gradients": "梯度",
    "Adam state": "Adam 状态",
    "activations": "激活值",
    "batch size": "批量大小",
    "memory of one training step (MB)": "一个训练步的内存（MB）",
    "Where the memory goes: the 784-512-512-10 MLP with Adam":
        "内存用在哪里：使用 Adam 的 784-512-512-10 MLP",
    # 12: the lab's runs, drawn again
    "layer 0, lr × 1": "层 0，学习率 × 1",
    "layer 0, lr × 3 from here →": "层 0，从这里起学习率 × 3 →",
    "rule of thumb 1e-3": "经验值 1e-3",
    "Update / parameter ratio of layer 0": "层 0 的更新比",
    "Global gradient norm, clipped at {threshold}": "全局梯度范数，裁剪阈值 {threshold}",
    "never clipped (stopped)": "从不裁剪（已停止）",
    "clipped at {threshold}": "裁剪阈值 {threshold}",
}
