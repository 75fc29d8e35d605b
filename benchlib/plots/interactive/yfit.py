"""The y axes fitted to what a zoom shows: on a report page, after a drag-zoom of the
time axis, each panel's y axis spans the data drawn inside the new time window (the
load step's 30,000 ops/s no longer flatten the run loops' 300 on the floor); a
double-click (the whole time axis) gives every y axis its own range back.

A few lines of JavaScript run after plotly draws the figure (plotly's ``post_script``,
inside the page: nothing from the network). It reads the points plotly computed
(``gd.calcdata``: the traces shown, not those a legend click hid), takes each y axis's
least and greatest y over the window, keeps 0 in an axis drawn from zero (``rangemode:
"tozero"``), pads 5 %, and works on a log axis in its log units. A y axis with no point
in the window is left as it was. In JupyterLab (plotly's own renderer) the figure is
drawn without it, as plotly draws any figure.
"""
from __future__ import annotations

# {plot_id}: the figure's div (plotly's placeholder in post_script)
Y_FIT_ON_ZOOM = r"""
(function () {
  var gd = document.getElementById("{plot_id}");
  if (!gd || !gd.on) { return; }
  function fit(ev) {
    var keys = Object.keys(ev || {});
    var zoomed = keys.some(function (k) { return /^xaxis\d*\.range/.test(k); });
    var whole = keys.some(function (k) { return /^xaxis\d*\.autorange$/.test(k); });
    if (!zoomed && !whole) { return; }
    var chosen = {};   // a box zoom's y range is the user's: kept
    keys.forEach(function (k) { var m = /^(yaxis\d*)\.range/.exec(k); if (m) { chosen[m[1]] = true; } });
    var full = gd._fullLayout, upd = {}, span = {};
    (gd.calcdata || []).forEach(function (cd) {
      var tr = cd[0] && cd[0].trace;
      if (!tr || tr.visible !== true) { return; }
      var xa = full[tr.xaxis.replace("x", "xaxis")], yname = tr.yaxis.replace("y", "yaxis");
      var lo = xa.r2l(xa.range[0]), hi = xa.r2l(xa.range[1]);
      cd.forEach(function (p) {
        if (typeof p.x !== "number" || typeof p.y !== "number" || !isFinite(p.y)) { return; }
        if (p.x < lo || p.x > hi) { return; }
        var s = span[yname] || (span[yname] = [Infinity, -Infinity]);
        s[0] = Math.min(s[0], p.y); s[1] = Math.max(s[1], p.y);
      });
    });
    Object.keys(full).forEach(function (name) {
      if (!/^yaxis\d*$/.test(name)) { return; }
      var ya = full[name], s = span[name];
      if (chosen[name]) { return; }
      if (whole) { upd[name + ".autorange"] = true; return; }
      if (!s) { return; }
      var a = s[0], b = s[1];
      if (ya.type === "log") {
        if (a <= 0) { return; }
        a = Math.log10(a); b = Math.log10(b);
      } else if (ya.rangemode === "tozero") {
        a = Math.min(0, a); b = Math.max(0, b);
      }
      var pad = (b - a) * 0.05 || Math.abs(b) * 0.05 || 1;
      upd[name + ".range"] = [ya.rangemode === "tozero" && a === 0 ? 0 : a - pad, b + pad];
    });
    if (Object.keys(upd).length) { Plotly.relayout(gd, upd); }
  }
  gd.on("plotly_relayout", fit);
})();
"""
