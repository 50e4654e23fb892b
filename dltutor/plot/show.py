"""``plot.show()``: matplotlib's ``plt.show()``, with the chapters' figure texts in the kit's language.

A chapter draws its own figures in English code (``ax.set_title("Two warmups into the same
cosine")``), and the Chinese edition runs the same code. Ending the cell with ``plot.show()``
instead of ``plt.show()`` translates each open figure's titles, labels, legend entries and texts
through the i18n tables first (``language.speak_the_figures_language``), so the Chinese notebook
shows Chinese; in English it is exactly ``plt.show()``.
"""
from __future__ import annotations

from .language import speak_the_figures_language


def show() -> None:
    """Show every open figure, as ``plt.show()`` does, its words in the kit's language.

    >>> import matplotlib; matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from dltutor import plot
    >>> fig, ax = plt.subplots()
    >>> line, = ax.plot([0, 1], [1, 0], label="epoch")
    >>> plot.show()                              # Agg draws nothing on screen; Jupyter shows it
    >>> plt.close(fig)
    """
    import matplotlib.pyplot as plt      # only here: the rest of dltutor.plot never needs pyplot

    for number in plt.get_fignums():
        speak_the_figures_language(plt.figure(number))
    plt.show()
