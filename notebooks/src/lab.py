# ---
# jupyter:
#   voila:
#     template: dltutor
# ---

# %% [markdown]
# # dltutor live lab
#
# Pick a demo, press **play**, and change the controls while the network trains: freeze a
# layer, give it its own learning-rate multiplier (**lr ×**), switch on clipping, slow it down
# or speed it up with **speed**. The plots show what each change did, from the step you made
# it. Chapter 12 (`12_live_lab.ipynb`) explains every control and proves what the plots show.

# %% tags=["nbval-ignore-output"]
from dltutor.lab.app import app

app()
