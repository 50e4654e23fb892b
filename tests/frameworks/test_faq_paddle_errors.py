"""The FAQ's Paddle error messages (notebooks/FAQ.md, "Paddle error messages the learners quote").

The kit's source documents quote three questions from Paddle 1.x's FAQ. For each, the FAQ says
what Paddle 3 does today, and these tests run it in Paddle 3.3 (the ``paddle1-`` half, what the
fluid API did, is cited from Paddle's source in notebooks/SOURCES.md):

* an optimizer made without its parameters in dynamic-graph mode still raises, the argument now
  named ``parameters``; in static-graph mode it may still be left out;
* the public pooling functions have no ``global_pooling``; adaptive pooling to size 1 is global
  pooling; the ``pool2d`` operator underneath still ignores its kernel size under the switch;
* ``py_reader`` is gone; ``load_inference_model`` gives the program, its feed names and fetch
  targets, and the program is fed arrays read in Python.
"""
from __future__ import annotations

import numpy as np
import pytest

from claims import claim

NO_PARAMETERS = "parameters argument given to the Optimizer should not be None in dygraph mode."


@claim("paddle-faq-optimizer-parameters-none")
@pytest.mark.parametrize("name", ["SGD", "Momentum", "Adam", "AdamW"])
def test_an_optimizer_without_parameters_still_raises_in_dygraph_mode(paddle, name):
    optimizer_class = getattr(paddle.optimizer, name)
    with pytest.raises(AttributeError) as caught:
        optimizer_class(learning_rate=0.1)
    assert str(caught.value) == NO_PARAMETERS
    model = paddle.nn.Linear(3, 2)
    optimizer = optimizer_class(learning_rate=0.1, parameters=model.parameters())   # the fix
    before = model.weight.numpy().copy()
    model(paddle.ones([4, 3])).sum().backward()
    optimizer.step()
    assert not np.allclose(model.weight.numpy(), before)


@claim("paddle-faq-optimizer-parameters-none")
def test_in_static_mode_minimize_updates_the_programs_parameters(paddle):
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, 3], "float32")
            layer = paddle.nn.Linear(3, 2)
            loss = paddle.mean(layer(x))
            paddle.optimizer.SGD(learning_rate=0.1).minimize(loss)     # no parameters given
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        feed = {"x": np.ones((4, 3), "float32")}
        runs = [exe.run(main, feed=feed, fetch_list=[layer.weight, layer.bias]) for _ in range(2)]
    finally:
        paddle.disable_static()
    for first, second in zip(*runs):                  # each step moved the weight and the bias
        assert not np.allclose(first, second)


@claim("paddle-faq-global-pooling")
def test_global_pooling_is_adaptive_pooling_to_size_one(paddle):
    functional = paddle.nn.functional
    x_np = np.arange(2 * 3 * 4 * 5, dtype="float32").reshape(2, 3, 4, 5) % 7
    x = paddle.to_tensor(x_np)
    for pool in (functional.avg_pool2d, functional.max_pool2d):
        with pytest.raises(TypeError, match="global_pooling"):
            pool(x, kernel_size=2, global_pooling=True)
    mean, peak = x_np.mean(axis=(2, 3), keepdims=True), x_np.max(axis=(2, 3), keepdims=True)
    assert np.allclose(functional.adaptive_avg_pool2d(x, output_size=1).numpy(), mean)
    assert np.allclose(functional.adaptive_max_pool2d(x, output_size=1).numpy(), peak)
    assert np.allclose(paddle.nn.AdaptiveAvgPool2D(1)(x).numpy(), mean)


@claim("paddle-faq-global-pooling")
def test_the_pool2d_operator_still_ignores_the_kernel_size_under_global_pooling(paddle):
    x_np = np.arange(2 * 3 * 4 * 5, dtype="float32").reshape(2, 3, 4, 5) % 7
    x = paddle.to_tensor(x_np)

    def pool2d(kernel, global_pooling):
        # (x, kernel_size, strides, paddings, ceil_mode, exclusive, data_format, pooling_type,
        #  global_pooling, adaptive, padding_algorithm), the order Paddle's own avg_pool2d uses
        return paddle._C_ops.pool2d(x, kernel, [1, 1], [0, 0], False, True, "NCHW", "avg",
                                    global_pooling, False, "EXPLICIT").numpy()

    for kernel in ([1, 1], [2, 2], [3, 3]):
        assert np.allclose(pool2d(kernel, True), x_np.mean(axis=(2, 3), keepdims=True))
    assert pool2d([2, 2], False).shape == (2, 3, 3, 4)          # without it, the kernel counts


@claim("paddle-faq-inference-model-feed")
def test_py_reader_is_gone_and_an_inference_model_is_fed_arrays(paddle, tmp_path):
    assert not hasattr(paddle, "fluid") and not hasattr(paddle.static, "py_reader")
    data = np.arange(24, dtype="float32").reshape(8, 3)
    dataset = paddle.io.TensorDataset([paddle.to_tensor(data)])
    batches = [batch[0].numpy() for batch in paddle.io.DataLoader(dataset, batch_size=4)]
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, 3], "float32")
            y = paddle.static.nn.fc(x, 2)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        prefix = str(tmp_path / "model")
        paddle.static.save_inference_model(prefix, [x], [y], exe, program=main)
        program, feed_names, fetch_targets = paddle.static.load_inference_model(prefix, exe)
        assert feed_names == ["x"] and len(fetch_targets) == 1
        outputs = [exe.run(program, feed={feed_names[0]: batch}, fetch_list=fetch_targets)[0]
                   for batch in batches]                      # each batch read in Python, fed
        expected = exe.run(main, feed={"x": data}, fetch_list=[y])[0]
    finally:
        paddle.disable_static()
    assert len(batches) == 2 and np.allclose(np.concatenate(outputs), expected)
