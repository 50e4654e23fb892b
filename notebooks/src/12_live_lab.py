# %% [markdown]
# # The live lab
#
# **About 20 minutes.** You will be able to:
#
# * freeze and unfreeze a layer while a network trains, and read the frozen steps in the plots;
# * raise one layer's lr multiplier, and tell its effect on the next step from its effect on
#   progress;
# * rescue a network with exploding gradients by switching on global-norm clipping;
# * steer a training run with the lab's widgets, and check in code what each control did.
#
# The earlier chapters took parameter management apart one idea at a time: freezing
# (chapter 08), learning rates per parameter (chapter 06), clipping (chapter 09). This chapter
# puts them together **while a network trains**:
#
# * What happens when I freeze a layer in the middle of training?
# * What happens when I raise one layer's learning-rate multiplier?
# * What happens when I switch on gradient clipping?
#
# The tool is a `TrainingLab`: a model, its optimizer, a loss and data, trained step by step,
# with controls that take effect at the next step. Each experiment is done first in code, with
# plots and an assert cell that proves what the plot shows. At the end, `lab.show()` gives the
# same controls as widgets (checkboxes, sliders, play and pause buttons) next to live plots, so
# you can try everything while the network trains.

# %%
import matplotlib.pyplot as plt
import numpy as np

import dltutor as dt
from dltutor import plot
from dltutor.lab import LabError, demos

np.set_printoptions(precision=4, suppress=True)
STEPS = 100 if dt.quick_mode() else 300     # steps per phase of each experiment
print("quick mode:", dt.quick_mode())

# %% [markdown]
# ## A lab you can steer
#
# `demos.moons_mlp()` is a ready-made lab: a 2-16-16-2 ReLU network learning the two-moons
# data with SGD (momentum 0.9) on mini-batches of 32. Its `layers` are the names of the
# modules that own parameters: the three `Linear` layers `"0"`, `"2"` and `"4"` (the ReLUs in
# between have none).

# %%
lab = demos.moons_mlp()
print(lab)
print("layers:", lab.layers)
lab.step(STEPS)
print(f"after {lab.steps_done} steps: loss {lab.last_loss:.3f}, accuracy {lab.accuracy():.3f}")

# %% [markdown]
# The controls are plain methods, and each takes effect from the next step:
#
# | control | what it does |
# | --- | --- |
# | `lab.freeze("2")` / `lab.freeze("2", False)` | stop / restart training a layer (`requires_grad_(False)` on its parameters) |
# | `lab.set_lr_mult("0", 3)` | that layer's effective lr becomes lr × 3 (0 stops it) |
# | `lab.set_clip("global_norm", 1.0)` | clip the gradients: `"value"`, `"norm"` (each tensor), `"global_norm"` (all together) or `None` |
# | `lab.set_lr(0.05)` | the global learning rate |
# | `lab.step(n)`, `lab.reset()` | train n steps; back to the initial weights (the controls stay) |
#
# A `Recorder` (`lab.recorder`) writes down, for every step and every layer, the parameter
# norm, the gradient norm before and after clipping, the size of the update and whether the
# layer was frozen. `lab.state()` sums up the latest values:

# %%
state = lab.state()
for row in state["layers"]:
    print(f"layer {row['name']}: |w| = {row['param_norm']:.3f}, "
          f"update/param = {row['update_ratio']:.2e}, frozen = {row['frozen']}")

# %% [markdown]
# A control refuses a value it cannot take, says why, and changes nothing:

# %%
try:
    lab.set_lr_mult("2", -1)
except LabError as err:
    print("LabError:", err)
print("lr multiplier of layer 2 is still", lab.state()["layers"][1]["lr_mult"])

# %%
assert lab.state()["layers"][1]["lr_mult"] == 1.0

# %% [markdown]
# ## Steer a network while it trains
#
# ### Freeze a layer
#
# We train for a while, freeze the middle layer `"2"`, train on, then unfreeze it.

# %%
def freeze_and_thaw(seed=0):
    """A moons lab: STEPS steps, then layer "2" frozen for STEPS steps, then STEPS // 2 more.

    `lab.grads_of_2` notes, at every step, the gradients that backward left on layer 2's
    parameters (a step pre-hook runs between backward and the update)."""
    lab = demos.moons_mlp(seed=seed)
    lab.grads_of_2 = []
    lab.optimizer.register_step_pre_hook(
        lambda opt, args, kwargs: lab.grads_of_2.append([p.grad for p in lab.model[2].parameters()]))
    lab.step(STEPS)
    lab.freeze("2")
    lab.step(STEPS)
    lab.freeze("2", False)
    lab.step(STEPS // 2)
    return lab


lab = freeze_and_thaw()
fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.3), layout="constrained")
plot.traces(lab.recorder, "param_norm", ax=axes[0])
plot.loss(lab.recorder, ax=axes[1], smooth=0.9)
plot.show()

# %% [markdown]
# While layer `"2"` is frozen (the shaded steps) its parameter norm is a flat line: it gets no
# gradient (its `p.grad` stays `None`, which the Recorder plots as 0), so the optimizer skips it
# and its weights do not change at all. The other layers keep learning, and so does the network
# as a whole (the loss goes on falling, more slowly when only two layers adapt). Unfrozen, the
# layer simply starts moving again.

# %%
def freezing_claims_hold(lab):
    rec = lab.recorder
    norm2 = rec.series("param_norm", "2")
    frozen = rec.series("frozen", "2") == 1.0
    during = slice(STEPS, 2 * STEPS)
    assert frozen[during].all() and not frozen[:STEPS].any() and not frozen[2 * STEPS:].any()
    assert np.all(norm2[during] == norm2[STEPS])                      # flat: not one bit changed
    assert np.ptp(rec.series("param_norm", "0")[during]) > 0          # the others kept training
    grads = lab.grads_of_2
    assert all(g is None for step in grads[during] for g in step)     # no gradient at all: None
    assert all(g is not None for step in grads[:STEPS] + grads[2 * STEPS:] for g in step)
    assert np.all(rec.series("grad_norm", "2")[during] == 0)          # which the Recorder plots as 0
    assert norm2[-1] != norm2[2 * STEPS - 1]                           # unfrozen: it moves again
    return True


assert freezing_claims_hold(lab)
assert all(freezing_claims_hold(freeze_and_thaw(seed)) for seed in range(1, 5))   # not luck

# %% [markdown] tags=["claim-paddle-lab-paramattr-learning-rate"]
# ### Raise the lr multiplier of one layer
#
# A layer's effective learning rate is the optimizer's lr times the layer's multiplier
# (`p.lr_mult`, Paddle's `ParamAttr(learning_rate=...)`, which all of Paddle's optimizers but
# Rprop and LBFGS apply). To see exactly what tripling it does, we train two identical labs
# for the same steps (same seed: they stay identical), then triple the multiplier of the first
# layer in one of them and let both go on.

# %%
def boosted_pair(seed=0):
    """Two identical labs; from step STEPS on, layer 0 of the second trains with lr x 3."""
    base, boosted = demos.moons_mlp(seed=seed), demos.moons_mlp(seed=seed)
    base.step(STEPS)
    boosted.step(STEPS)
    boosted.set_lr_mult("0", 3)
    base.step(STEPS)
    boosted.step(STEPS)
    return base, boosted


base, boosted = boosted_pair()
ratio_base = base.recorder.series("update_ratio", "0")
ratio_boosted = boosted.recorder.series("update_ratio", "0")
after = ratio_boosted[STEPS:] / ratio_base[STEPS:]
print("update/param ratio of layer 0, boosted / base, first steps after the change:",
      np.round(after[:6], 2))
print(f"median over the next 10 steps: {np.median(after[:10]):.2f}; "
      f"over the last {STEPS // 2}: {np.median(after[-(STEPS // 2):]):.2f}")

fig, ax = plt.subplots(figsize=(7.2, 3.2), layout="constrained")
ax.semilogy(base.recorder.steps, ratio_base, lw=1.2, label="layer 0, lr × 1")
ax.semilogy(boosted.recorder.steps, ratio_boosted, lw=1.2, label="layer 0, lr × 3 from here →")
ax.axvline(STEPS - 0.5, color="0.4", ls=":")
ax.axhline(1e-3, color="0.4", ls="--", lw=1, label="rule of thumb 1e-3")
ax.set(xlabel="optimizer step", ylabel="‖Δw‖ / ‖w‖", title="Update / parameter ratio of layer 0")
ax.legend(fontsize="small")
plot.show()

# %% [markdown]
# At the first step after the change the update is exactly three times as large: same
# weights, same gradient, same momentum, three times the step size. From the next step on the
# two runs differ (the bigger step took layer 0 somewhere else, where its gradient is another
# one), and the factor wanders: over the next ten steps the boosted layer still moves more than
# the base one, but by anything from about 1.5 to 8 times, depending on the seed. A multiplier
# scales the step, not the progress.

# %%
def lr_mult_claims_hold(base, boosted):
    after = (boosted.recorder.series("update_ratio", "0")[STEPS:]
             / base.recorder.series("update_ratio", "0")[STEPS:])
    u_base = base.recorder.series("update_norm", "0")[STEPS]
    u_boosted = boosted.recorder.series("update_norm", "0")[STEPS]
    assert abs(u_boosted / u_base - 3) < 1e-4              # the first step: exactly 3x the update
    assert 2.7 < after[0] < 3.3                            # and about 3x the update/param ratio
    assert np.median(after[:10]) > 1.2                     # then still larger, but wandering
    assert np.all(base.recorder.series("update_ratio", "2") > 0)   # the other layers train on
    return True


assert lr_mult_claims_hold(base, boosted)
assert all(lr_mult_claims_hold(*boosted_pair(seed)) for seed in range(1, 5))   # not luck

# %% [markdown]
# ### Switch on clipping
#
# `demos.exploding_gradients()` is a deep ReLU network (6 layers of 32) whose weights start
# twice as large as Kaiming's rule says (chapter 03): the signal doubles at every layer, and
# the first gradients are about a hundred times larger than a healthy network's. Its SGD
# (lr 0.05, momentum 0.9) is sized for healthy gradients. We make two labs from the same
# start and switch global-norm clipping at 1.0 on in one of them before the first step.

# %%
clipped, unclipped = demos.exploding_gradients(), demos.exploding_gradients()
THRESHOLD = 1.0
clipped.set_clip("global_norm", THRESHOLD)
unclipped.run(2 * STEPS)           # returns False: the lab stops at the first non-finite loss
clipped.run(2 * STEPS)
print(f"never clipped: stopped after {unclipped.steps_done} steps. {unclipped.error}")
print(f"clipped at {THRESHOLD}: {clipped.steps_done} steps, accuracy "
      f"{'above' if clipped.accuracy() > 0.95 else 'below'} 95%")

fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.3), layout="constrained")
plot.grad_norm_clipping(clipped.recorder, ax=axes[0], log=True)
axes[0].set_title(f"Global gradient norm, clipped at {THRESHOLD}")
plot.loss(unclipped.recorder, ax=axes[1], log=True)
axes[1].lines[-1].set(color="tab:red", label="never clipped (stopped)")
plot.loss(clipped.recorder, ax=axes[1], log=True)
axes[1].lines[-1].set(color="tab:blue", label=f"clipped at {THRESHOLD}")
axes[1].legend(fontsize="small")
plot.show()

# %% [markdown]
# Without clipping, the first step is about a hundred times too long; the larger weights make
# the next gradient larger still, and within a handful of steps the loss is `nan`: the lab
# stops and says why. With clipping, every update is made with a gradient whose global norm
# is at most 1.0 (the dashed line in the left plot): when the norm is above the threshold the
# optimizer scales all the gradients together by `1.0 / norm`, so their direction is kept and
# only the step length is capped. At first the scale is below 0.01; as the network settles,
# the gradients shrink, clipping acts less and less often, and the network learns the moons.
#
# This is not luck of the draw: the next cell checks the same story for five seeds (other
# initial weights and other moons). Your plot may differ from the one stored here after the
# first few dozen steps: training this fast amplifies the last bits of each matrix product,
# which another CPU rounds differently, so the wiggles take another course. The story does not.

# %%
def clipping_story_holds(seed):
    wild, tamed = demos.exploding_gradients(seed=seed), demos.exploding_gradients(seed=seed)
    tamed.set_clip("global_norm", THRESHOLD)
    assert not wild.run(2 * STEPS) and wild.steps_done < 10    # unclipped: blows up at once
    assert tamed.run(2 * STEPS)                                # clipped: trains to the end
    rec = tamed.recorder
    after_clip = np.sqrt((rec.series("clipped_grad_norm") ** 2).sum(axis=1))
    assert np.all(after_clip <= THRESHOLD * (1 + 1e-5))        # never above (float32 rounding)
    assert rec.series("clip_scale")[0] < 0.05                  # the first steps are cut hard
    assert tamed.accuracy() > 0.95                             # and it learns
    return True


assert all(clipping_story_holds(seed) for seed in range(5))

# %% [markdown]
# ## The live lab with widgets
#
# Now do it by hand while the network trains. Run the cell below: it shows the lab's
# controls and plots, live.
#
# * Press **play**. The loss falls, the decision boundary wraps around the moons.
# * **Tick freeze on layer 2** and watch its parameter-norm line (orange) go flat; the
#   shaded span marks the steps it was frozen, and a purple mark labelled "layer 2 frozen"
#   shows the step you clicked. Its gradient drops to the floor line labelled 0. Untick it
#   and it moves again.
# * **Slide lr × on layer 0** to 3 or 10: its update / parameter ratio jumps up. At 0 the
#   layer stops, like a freeze, but it still gets a gradient (chapter 08).
# * Set **clip** to *global norm*: beside the slider, ‖∇w‖ shows the gradient norm of the
#   latest step. The threshold starts at 0.3, below that norm on about half the steps: on
#   those, the thick dashed after-clipping lines drop to the threshold (dotted) while the thin
#   lines show what the gradients were, and the status line's clip scale drops below 1.
# * Type a negative **lr**: the lab refuses it, says why in the status line, and the box
#   snaps back. Nothing was changed.
# * **pause**, **step** (one step), **reset** (initial weights; your settings stay).
# * **speed**: training steps per second. Each demo starts at a pace where it learns in about
#   half a minute, so you can watch the boundary form and change a control halfway; slide it to
#   1 to follow single steps, or to *max* to go as fast as the machine goes.
#
# Training runs in the background of the kernel, in short slices, so you can run other cells
# meanwhile (`lab.freeze("0")` in a new cell shows up in the widgets too). Running this cell
# again replaces the old view and stops its training. The page `lab.ipynb` is the lab alone,
# with a menu of demos and a line saying what to try with each: two moons; exploding gradients
# (clipping rescues them); spirals, where the first layer's lr × decides how fast the arms are
# untangled; pretrained features, where freezing two pretrained layers keeps what they knew while
# a new head learns, and training them erases it; a tied layer; handwritten digits. Voilà serves
# it as an app (`voila notebooks/lab.ipynb`).

# %% tags=["nbval-ignore-output"]
lab = demos.moons_mlp()
lab.show()

# %% [markdown] tags=["claim-torch-diagnose-verdicts", "claim-paddle-diagnose-verdicts", "claim-torch-no-clip-in-optimizer"]
# ## Take the tools with you
#
# The kit's questions work on PyTorch and Paddle models too. `dt.diagnose.summary`,
# `explain_lr`, `why_not_updating` and `ties` accept a `torch.nn.Module` with its `torch.optim` optimizer, or
# a `paddle.nn.Layer` with its `paddle.optimizer` optimizer, and give the same tables and
# verdicts; a `Recorder` follows their training loops as it follows the lab's (PyTorch through
# the optimizer's step hooks, Paddle by wrapping its `step()`), and the plots above draw it.
#
# Every answer is read from the framework's own state: `requires_grad` (Paddle:
# `stop_gradient`), `.grad`, the optimizer's groups and momentum. Where a framework has no such
# idea, the table shows `-` and the row says so instead of guessing. PyTorch has no `lr_mult`, no
# regularizer on a parameter, and no clip inside its optimizers: you call `clip_grad_norm_` in
# your own loop, where no report can see it. Paddle has all three (`ParamAttr`, `need_clip`,
# `grad_clip`).
#
# The kit never needs either framework: `import dltutor` imports neither. The two cells below
# run where the framework is installed; elsewhere each prints one line saying it skipped.
# First a PyTorch network with a frozen first layer, and an optimizer that was only given the
# last layer:

# %%
torch = dt.diagnose.import_framework("torch")
if torch is not None:
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    tnet[0].requires_grad_(False)
    topt = torch.optim.SGD(tnet[2].named_parameters(prefix="2"), lr=0.1, momentum=0.9)
    tnet(torch.randn(16, 4)).pow(2).mean().backward()
    print(dt.diagnose.summary(tnet, topt))
    print(dt.diagnose.why_not_updating(tnet, topt, "0.weight").verdict)

# %% [markdown] tags=["claim-paddle-diagnose-verdicts"]
# And a Paddle network whose last layer got `ParamAttr(learning_rate=0.0)`, under a global-norm
# clip. Paddle's optimizer calls a parameter by its own name (`linear_1.w_0`), so pass the
# parameter itself to `explain_lr`:

# %%
paddle = dt.diagnose.import_framework("paddle")
if paddle is not None:
    paddle.seed(0)
    pnet = paddle.nn.Sequential(
        paddle.nn.Linear(4, 8), paddle.nn.ReLU(),
        paddle.nn.Linear(8, 1, weight_attr=paddle.ParamAttr(learning_rate=0.0)))
    popt = paddle.optimizer.Momentum(learning_rate=0.1, parameters=pnet.parameters(),
                                     grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0))
    (pnet(paddle.randn([16, 4])) ** 2).mean().backward()
    print(dt.diagnose.explain_lr(popt, pnet[2].weight))
    print(dt.diagnose.why_not_updating(pnet, popt, "2.weight").verdict)

# %% [markdown] tags=["claim-torch-names-12", "claim-paddle-names-12", "claim-mge-names-12", "claim-torch-lab-requires-grad-freeze", "claim-paddle-lab-stop-gradient-freeze", "claim-mge-lab-freeze-by-attach", "claim-torch-lab-param-group-lr", "claim-paddle-lab-paramattr-learning-rate", "claim-mge-lab-param-group-lr", "claim-torch-lab-clip-grad", "claim-paddle-lab-grad-clip", "claim-mge-lab-clip-grad"]
# ## What the frameworks call it
#
# | idea | dltutor lab | dltutor engine | PyTorch | Paddle | MegEngine |
# | --- | --- | --- | --- | --- | --- |
# | freeze a layer | `lab.freeze("2")` | `net[2].requires_grad_(False)` | `net[2].requires_grad_(False)` | `p.stop_gradient = True` (or `ParamAttr(trainable=False)`) | leave its parameters out of `gm.attach(...)` |
# | one layer's lr | `lab.set_lr_mult("0", 3)` | `p.lr_mult = 3` | a param group `{"params": ..., "lr": 3 * lr}` | `ParamAttr(learning_rate=3.0)` | a param group with its own `lr` |
# | clip the global norm | `lab.set_clip("global_norm", 1.0)` | `SGD(..., grad_clip=ClipGradByGlobalNorm(1.0))` | `torch.nn.utils.clip_grad_norm_(params, 1.0)` before `opt.step()` | `grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0)` | `megengine.optimizer.clip_grad_norm(params, 1.0)` |
# | clip each tensor's norm | `lab.set_clip("norm", 1.0)` | `ClipGradByNorm(1.0)` | `clip_grad_norm_` on each parameter | `paddle.nn.ClipGradByNorm(1.0)` | `clip_grad_norm` on each parameter |
# | clip values | `lab.set_clip("value", 0.5)` | `ClipGradByValue(0.5)` | `torch.nn.utils.clip_grad_value_(params, 0.5)` | `paddle.nn.ClipGradByValue(0.5)` | `megengine.optimizer.clip_grad_value(params, -0.5, 0.5)` |
# | watch norms per step | `lab.recorder` (a `Recorder`) | optimizer step hooks | hooks + TensorBoard | hooks + VisualDL | hooks |
#
# ## Summary
#
# **In two lines:** freezing, an lr multiplier and clipping are ordinary settings that act from the
# next step. Changing them while a network trains, and reading the recorded steps, shows what each
# one really changes.
#
# * **Freezing** a layer mid-run stops it dead: no gradient, no update, its parameter norm is
#   a flat line, while the rest of the network keeps learning. Unfreezing lets it move again.
# * **An lr multiplier** scales that layer's steps at once (exactly 3x at the first step),
#   but not its progress for ever: after a while the layer sits where its gradient differs.
# * **Clipping** caps the length of every step: with global-norm clipping at 1.0 the gradient
#   the optimizer uses never has a norm above 1.0, which is what lets a network with exploding
#   gradients learn at all (without it, this one overflows within a handful of steps).
# * All three are ordinary settings of the parameters and the optimizer; the lab only lets you
#   change them between two steps and shows what each did.
#
# ## Exercises
#
# Guided experiments: run each one with the lab's controls (in code, or in the widgets and then
# read `lab`), store what you measured, and the last line checks it: it runs the same
# experiment, compares, and says what it shows. `ex.q1.hint()` gives a hint, `ex.q1.solution()`
# an answer, `exercises.progress()` how every exercise stands.

# %%
from dltutor import exercises
from dltutor.exercises import ____

ex = exercises.chapter("12")

# %% [markdown]
# **1.** Freeze the *first* layer `"0"` of `demos.moons_mlp()` before any step and train 300
# steps. Does the network still learn the moons? Store `lab.accuracy()` in
# `accuracy_first_frozen`.

# %%
accuracy_first_frozen = ____
ex.q1.check()

# %% [markdown]
# **2.** In `demos.exploding_gradients()`, switch on global-norm clipping at 1.0 only after 3
# unclipped steps, then run 300 steps. Does it still reach 95 % accuracy? Store
# `lab.accuracy()` in `late_clip_accuracy`. To see why, store the largest layer norm of the 3
# unclipped steps in `norm_after_3`: `lab.recorder.series("param_norm")` has one row a step and
# one column a layer.

# %%
late_clip_accuracy = ____
norm_after_3 = ____
ex.q2.check()

# %% [markdown]
# **3.** In `demos.spirals_mlp()`, how many times fewer steps does the network need to reach
# 90 % accuracy when layer `"0"` has lr × 10? Store steps at × 1 divided by steps at × 10 in
# `speedup` (check the accuracy every 25 steps).

# %%
speedup = ____
ex.q3.check()

# %% [markdown]
# **4.** Write `steps_to_reach(lab, target, every)`: train `lab` `every` steps at a time until
# its accuracy, checked before each round, reaches `target`, and return `lab.steps_done`. (It is
# the measurement of exercise 3, for any lab and target.) The check measures runs of its own
# with it and compares.

# %%
steps_to_reach = ____
ex.q4.check()

# %% [markdown]
# **5.** (Not checked: an experiment of your own.) In the widget view, set the lr multiplier of
# layer 4 to 0 and compare with freezing it. What is different in the gradient-norm plot?
# *Hint: chapter 08, way 2.*
