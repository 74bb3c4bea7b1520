"""The byte map of notebooks/python.md: every byte of a board file coloured by the section its
owner lies in (or its class). Run from the checkout: python notebooks/python_byte_map.py
(needs the nbg_lab wheel and matplotlib)."""

import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

import nbg_lab

path = "../shared/corpus/v2/a733-face_detector_int16-0000.nb"
im = nbg_lab.image(path)
size = im.owners[-1].end

# Each byte coloured by what owns it: the section its owner lies in, else the owner's class.
def group(o):
    m = re.search(r"NBG_SECTION_(\w+)", o.field or "")
    return m.group(1) if m else (o.class_ if o.class_ != "decoded-record" else (o.field or "?").split()[0])

groups = sorted({group(o) for o in im.owners})
index = np.zeros(size, dtype=np.int32)
for o in im.owners:
    index[o.start : o.end] = groups.index(group(o))
width = 1024
rows = -(-size // width)
grid = np.full(rows * width, -1, dtype=np.int32)
grid[:size] = index
grid = np.ma.masked_less(grid.reshape(rows, width), 0)

cmap = plt.get_cmap("tab20", len(groups))
fig, ax = plt.subplots(figsize=(10, 6), dpi=100)
ax.imshow(grid, aspect="auto", cmap=cmap, interpolation="nearest", vmin=-0.5, vmax=len(groups) - 0.5)
ax.set_xlabel("byte within row (1024 bytes a row)")
ax.set_ylabel("row")
ax.set_title(f"{path.split('/')[-1]}: {len(im.owners)} owners, {size} bytes")
handles = [plt.Rectangle((0, 0), 1, 1, color=cmap(i)) for i in range(len(groups))]
ax.legend(handles, groups, loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=7)
fig.tight_layout()
fig.savefig("notebooks/report/python-byte-map.png", metadata={"Software": None})
print(len(groups), "groups:", ", ".join(groups))
