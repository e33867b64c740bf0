"""An Agg canvas for live widgets that keeps the text it has laid out and the glyphs it has rendered.

matplotlib's Agg renderer (3.11) lays out every string and renders every glyph afresh on each
draw: FreeType hints and rasterises it, with a few NumPy calls around each glyph. Measured on
the course's widgets, that is half to nine tenths of a slider move (titles, legends and the
numbers a move changes; tick labels when an axis rescales). Yet a glyph's pixels depend only on
its font, size, the dpi, the rotation, the rendering flags and where it falls within a pixel (in
64ths, FreeType's unit), and a move mostly redraws glyphs drawn before. This renderer keeps them
under that key (and each string's layout under its text and font), so a glyph seen before costs
one blit, and draws exactly the pixels matplotlib's own renderer draws
(tests/speclab/test_fastagg.py compares them).

It overrides draw_text and a private method of matplotlib's RendererAgg (_draw_text_glyphs_and_boxes),
and answers _get_font_height_metrics, the private hook Text's layout asks a renderer for a font's
line metrics (read from the font's tables on every draw otherwise); requirements.txt pins
matplotlib, and where those methods are not the ones this was written against, `Canvas` falls
back to the stock renderer.
"""
import math

import numpy as np
from matplotlib.backends import backend_agg
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.font_manager import fontManager, get_font
from matplotlib.ft2font import RenderMode

# Both caches are shared by every live widget of a kernel, and bounded: past the limit the oldest
# entries go (a glyph is a few hundred bytes; a layout, a list of a few dozen tuples).
MAX_GLYPHS = 20_000
MAX_LAYOUTS = 2_000
_glyphs = {}    # (font, size, dpi, glyph, matrix, x and y within the pixel, flags, mode) -> (pixels, left, top)
_layouts = {}   # (text, font properties, dpi, flags, features, language) -> glyph tuples
_metrics = {}   # (font properties, dpi) -> (ascent, descent, line gap) of the font, in pixels


def _bounded(cache, limit):
    while len(cache) > limit:
        del cache[next(iter(cache))]


class _Renderer(RendererAgg):
    def _get_font_height_metrics(self, prop):
        # Text's layout asks for a font's line metrics on every draw and, when a renderer does not
        # answer, reads them from the font's tables each time: the same numbers, kept here.
        key = (tuple(vars(prop).items()), self.dpi)
        if key not in _metrics:
            _metrics[key] = (None, None, None)
            font = get_font(fontManager._find_fonts_by_props(prop))
            for table_name, gap, ascent, descent in (("OS/2", "sTypoLineGap", "sTypoAscender", "sTypoDescender"),
                                                     ("hhea", "lineGap", "ascent", "descent")):
                table = font.get_sfnt_table(table_name)
                if table is not None:
                    scale = prop.get_size_in_points() * self.dpi / 72 / font.get_sfnt_table("head")["unitsPerEm"]
                    _metrics[key] = (table[ascent] * scale, -table[descent] * scale, table[gap] * scale)
                    break
        return _metrics[key]

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath:
            return super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
        features = mtext.get_fontfeatures() if mtext is not None else None
        language = mtext.get_language() if mtext is not None else None
        flags = get_hinting_flag()
        key = (s, tuple(vars(prop).items()), self.dpi, flags,
               tuple(features) if features is not None else None, language)
        glyphs = _layouts.get(key)
        if glyphs is None:
            font = self._prepare_font(prop)
            size = prop.get_size_in_points()
            glyphs = _layouts[key] = [(item.ft_object, size, item.glyph_index, 0, 1, item.x, item.y)
                                      for item in font._layout(s, flags=flags, features=features, language=language)]
            _bounded(_layouts, MAX_LAYOUTS)
        self._draw_text_glyphs_and_boxes(gc, x, y, angle, glyphs, [])

    def _draw_text_glyphs_and_boxes(self, gc, x, y, angle, glyphs, boxes):
        # As matplotlib's, glyph by glyph, but a glyph rendered before is blitted from the cache.
        cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
        rotation = np.array([[cos, -sin], [sin, cos]])
        flags = get_hinting_flag()
        mode = RenderMode.NORMAL if gc.get_antialiased() else RenderMode.MONO
        height = int(self.height)
        matrices = {}
        for font, size, glyph_index, slant, extend, dx, dy in glyphs:   # dy is upwards
            if (slant, extend) not in matrices:
                matrices[slant, extend] = (0x10000 * rotation @ [[extend, extend * slant], [0, 1]]).round().astype(int)
            matrix = matrices[slant, extend]
            px = round(0x40 * (x + dx * cos - dy * sin))
            py = round(0x40 * (self.height - y + dx * sin + dy * cos))   # FreeType's y is upwards
            key = (font, size, self.dpi, glyph_index, matrix.tobytes(), px & 0x3F, py & 0x3F, flags, mode)
            cached = _glyphs.get(key)
            if cached is None:
                # Rendered where it falls within its pixel; moving it by whole pixels moves the bitmap
                # by as many, the same pixels.
                font.set_size(size, self.dpi)
                font._set_transform(matrix, [px & 0x3F, py & 0x3F])
                bitmap = font._render_glyph(glyph_index, flags, mode)
                buffer = np.array(bitmap.buffer)
                if mode is RenderMode.MONO:
                    buffer *= 0xff
                cached = _glyphs[key] = (buffer, bitmap.left, bitmap.top)
                _bounded(_glyphs, MAX_GLYPHS)
            buffer, left, top = cached
            # draw_text_image's y is downwards & the bitmap bottom side
            self._renderer.draw_text_image(buffer, left + (px >> 6), height - (top + (py >> 6)) + buffer.shape[0], 0, gc)
        if boxes:
            super()._draw_text_glyphs_and_boxes(gc, x, y, angle, (), boxes)


# What this was written against: matplotlib's draw_text hands glyph tuples to this method.
_SUPPORTED = hasattr(RendererAgg, "_draw_text_glyphs_and_boxes") and hasattr(backend_agg, "get_hinting_flag")


class Canvas(FigureCanvasAgg):
    """FigureCanvasAgg whose renderer keeps laid-out text and rendered glyphs (see the module)."""

    def get_renderer(self):
        w, h = self.get_width_height(physical=True)
        key = w, h, self.figure.dpi
        if self._lastKey != key:
            self.renderer = (_Renderer if _SUPPORTED else RendererAgg)(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer
