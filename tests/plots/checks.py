"""What every rendered plot must satisfy: a real PNG of bounded size, short legends, nothing clipped."""

import struct
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

from simnet.plots._figure import DPI

MAX_PIXELS = (2400, 1800)
MAX_LEGEND = 12


def png_size(path: Path) -> tuple[int, int]:
    """Width and height of a PNG, read from its header."""
    data = Path(path).read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def legends(figure: Figure) -> list:
    return [legend for legend in [*figure.legends, *(axes.get_legend() for axes in figure.axes)] if legend]


def clipped(figure: Figure) -> list[str]:
    """Titles, axis labels and legends drawn (partly) outside the figure."""
    figure.set_dpi(DPI)
    renderer = FigureCanvasAgg(figure).get_renderer()
    box = figure.bbox
    texts = [*figure.texts, *(t for axes in figure.axes for t in (axes.title, axes.xaxis.label, axes.yaxis.label))]
    found = []
    for artist in [*texts, *legends(figure)]:
        if not artist.get_visible() or (isinstance(artist, Text) and not artist.get_text().strip()):
            continue
        extent = artist.get_window_extent(renderer)
        if extent.x0 < box.x0 - 1 or extent.y0 < box.y0 - 1 or extent.x1 > box.x1 + 1 or extent.y1 > box.y1 + 1:
            found.append(artist.get_text() if isinstance(artist, Text) else "a legend")
    return found


def overlapping_titles(figure: Figure) -> list[tuple[str, str]]:
    """Pairs of axes titles whose drawn text overlaps (neighbouring panels' titles too long for their panels)."""
    figure.set_dpi(DPI)
    renderer = FigureCanvasAgg(figure).get_renderer()
    boxes = [(axes.title.get_text(), axes.title.get_window_extent(renderer)) for axes in figure.axes
             if axes.title.get_visible() and axes.title.get_text().strip()]
    return [(first, second) for index, (first, box) in enumerate(boxes) for second, other in boxes[index + 1:]
            if box.overlaps(other)]


def assert_readable(figure: Figure, path: Path) -> None:
    width, height = png_size(path)
    assert 300 <= width <= MAX_PIXELS[0] and 200 <= height <= MAX_PIXELS[1], f"{path.name}: {width} x {height} px"
    for legend in legends(figure):
        assert len(legend.get_texts()) <= MAX_LEGEND, f"{path.name}: {len(legend.get_texts())} legend entries"
    assert not clipped(figure), f"{path.name}: clipped {clipped(figure)}"
    assert not overlapping_titles(figure), f"{path.name}: overlapping titles {overlapping_titles(figure)}"
