// nbg report: draws the byte map / heat strips and wires hover, click and keyboard.
// Reads only the embedded JSON (#nbg-data); any error is written into #js-errors and
// body[data-status] becomes "error" so a headless browser test can see it.
(function () {
  'use strict';
  var t0 = performance.now();
  var body = document.body;

  function fail(msg) {
    var box = document.getElementById('js-errors');
    box.hidden = false;
    box.textContent += msg + '\n';
    body.setAttribute('data-status', 'error');
    if (window.console) { console.error(msg); }
  }
  window.addEventListener('error', function (e) {
    fail('Uncaught ' + e.message + ' (line ' + e.lineno + ')');
  });
  window.addEventListener('unhandledrejection', function (e) {
    fail('Unhandled rejection: ' + e.reason);
  });

  function $(id) { return document.getElementById(id); }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function hx(n) { return '0x' + n.toString(16); }
  function h2(b) { return (b < 16 ? '0' : '') + b.toString(16); }
  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue('--' + name).trim() || '#888';
  }
  // Largest index i with key(arr[i]) <= x, or -1.
  function floorIndex(arr, x, key) {
    var lo = 0, hi = arr.length - 1, ans = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (key(arr[mid]) <= x) { ans = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    return ans;
  }
  function hashParams() {
    var out = {};
    location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
      if (!kv) { return; }
      var p = kv.split('=');
      out[decodeURIComponent(p[0])] = p.length > 1 ? decodeURIComponent(p[1]) : '1';
    });
    return out;
  }
  function num(s) { return /^0x/i.test(s) ? parseInt(s, 16) : parseInt(s, 10); }

  var D = JSON.parse($('nbg-data').textContent);

  // ---- #keys: drive the page with synthetic key presses and button clicks -----------------
  function key(el, k) {
    el.focus();
    el.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
  }
  function keyCheck(el, steps) {
    var log = [];
    steps(log);
    el.setAttribute('data-keys', log.length ? log.join('; ') : 'ok');
  }

  // ---- heat strips (diff and capture) ------------------------------------------------------
  function heatStrip(canvas, bins, size, onPick) {
    var ctx = canvas.getContext('2d');
    var W = canvas.width, H = canvas.height, n = bins.length, cur = -1;
    var max = 0;
    bins.forEach(function (v) { if (v > max) { max = v; } });
    function draw() {
      ctx.fillStyle = '#eeeeee';
      ctx.fillRect(0, 0, W, H);
      for (var i = 0; i < n; i++) {
        if (!bins[i]) { continue; }
        var t = Math.log(1 + bins[i]) / Math.log(1 + max);
        ctx.fillStyle = 'rgba(213,94,0,' + (0.25 + 0.75 * t).toFixed(3) + ')';
        var x = Math.floor(i * W / n), w = Math.max(2, Math.ceil(W / n));
        ctx.fillRect(x, 0, w, H);
      }
      if (cur >= 0) {
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 2;
        ctx.strokeRect(Math.floor(cur * W / n) + 1, 1, Math.max(3, W / n) - 1, H - 2);
      }
    }
    function info(i) {
      var s = Math.floor(i * size / n), e = Math.floor((i + 1) * size / n);
      return { bin: i, start: s, end: e, text: 'bin ' + i + ' [' + hx(s) + ', ' + hx(e) + '): ' + bins[i] + ' changed bytes' };
    }
    function pick(i, open) {
      cur = Math.max(0, Math.min(n - 1, i));
      draw();
      var x = info(cur);
      $('where').textContent = canvas.getAttribute('id') + ' ' + x.text;
      if (onPick) { onPick(x, open); }
    }
    canvas.addEventListener('mousemove', function (e) {
      var r = canvas.getBoundingClientRect();
      var i = Math.floor((e.clientX - r.left) / r.width * n);
      canvas.title = info(Math.max(0, Math.min(n - 1, i))).text;
    });
    canvas.addEventListener('click', function (e) {
      var r = canvas.getBoundingClientRect();
      pick(Math.floor((e.clientX - r.left) / r.width * n), true);
    });
    canvas.addEventListener('keydown', function (e) {
      var next = -1;
      if (e.key === 'ArrowRight') { next = cur + 1; }
      else if (e.key === 'ArrowLeft') { next = cur - 1; }
      else if (e.key === 'End') { next = n - 1; }
      else if (e.key === 'Home') { next = 0; }
      else if (e.key === 'Tab') { return; }
      else if (e.key === 'Enter' || e.key === ' ') { pick(Math.max(cur, 0), true); e.preventDefault(); return; }
      if (e.key === 'n' || e.key === 'p') {
        // next / previous bin with changes
        var step = e.key === 'n' ? 1 : -1;
        for (var j = cur + step; j >= 0 && j < n; j += step) { if (bins[j]) { next = j; break; } }
      }
      if (next >= 0) { pick(next, false); e.preventDefault(); }
    });
    draw();
  }

  // ---- two graphs --------------------------------------------------------------------------
  function hexSide(title, w) {
    var from = w[0], hex = w[1], s = w[2], e = w[3], n = hex.length / 2;
    var rows = [];
    for (var row = from & ~15; row < from + n; row += 16) {
      var cells = [];
      for (var o = row; o < row + 16; o++) {
        if (o < from || o >= from + n) { cells.push('  '); continue; }
        var b = hex.substr(2 * (o - from), 2);
        cells.push('<span class="b' + (o >= s && o < e ? ' chg' : '') + '">' + b + '</span>');
      }
      rows.push('<div class="hexrow"><span class="off">' + ('0000000' + row.toString(16)).slice(-8) + '</span>  ' + cells.join(' ') + '</div>');
    }
    return '<div><h3>' + esc(title) + ' [' + hx(s) + ', ' + hx(e) + ')</h3><div class="hexrows">' + rows.join('') + '</div></div>';
  }
  function diffPage() {
    var rows = Array.prototype.slice.call(document.querySelectorAll('#fields tr.change'));
    function openRow(i, focusButton) {
      var tr = rows[i];
      if (!tr) { return; }
      rows.forEach(function (r) { r.classList.remove('sel'); });
      tr.classList.add('sel');
      var w = D.hex[i];
      $('hex').innerHTML = '<div class="hexpanel" id="hexpanel" data-row="' + i + '"><h3>Row ' + i + ': ' +
        esc(tr.getAttribute('data-field')) + '</h3><div class="sides">' + hexSide('A', w[0]) + hexSide('B', w[1]) +
        '</div><p class="note">Changed bytes are marked; at most 64 changed bytes per range with 16 bytes of context.</p></div>';
      if (focusButton) { tr.scrollIntoView({ block: 'nearest' }); }
    }
    rows.forEach(function (tr, i) {
      tr.querySelector('button.hexbtn').addEventListener('click', function () { openRow(i, false); });
    });
    function nearest(side, x) {
      // First row at or after the bin start on that side.
      var best = -1;
      D.rows.forEach(function (r, i) {
        if (r[side] >= x.start && (best < 0 || r[side] < D.rows[best][side])) { best = i; }
      });
      return best;
    }
    heatStrip($('heat-a'), D.heat_a, D.a_size, function (x, open) {
      var i = nearest(0, x);
      if (open && i >= 0) { openRow(i, true); }
    });
    heatStrip($('heat-b'), D.heat_b, D.b_size, function (x, open) {
      var i = nearest(1, x);
      if (open && i >= 0) { openRow(i, true); }
    });
    var p = hashParams();
    if (p.row !== undefined) { openRow(num(p.row), false); }
    if (p.keys) { keyCheck($('heat-a'), function (log) {
      var strip = $('heat-a');
      key(strip, 'n');
      key(strip, 'n');
      key(strip, 'Enter');
      var m = /bin (\d+) \[0x([0-9a-f]+), 0x[0-9a-f]+\): (\d+) changed/.exec($('where').textContent);
      if (!m || +m[1] === 0 || +m[3] === 0) { log.push('n did not move to a changed bin: ' + $('where').textContent); }
      var panel = $('hexpanel');
      if (!panel || !m || D.rows[+panel.getAttribute('data-row')][0] < parseInt(m[2], 16)) {
        log.push('Enter on the A strip did not open a row at or after the bin');
      }
      rows[2].querySelector('button.hexbtn').click();
      if ($('hexpanel').getAttribute('data-row') !== '2') { log.push('the Hex button did not open row 2'); }
    }); }
  }

  // ---- capture set -------------------------------------------------------------------------
  function capturePage() {
    heatStrip($('heat-a'), D.heat_a, D.a_size, null);
  }

  // ---- one graph: the byte map -------------------------------------------------------------
  function graphPage() {
    var canvas = $('map'), ctx = canvas.getContext('2d');
    var W = canvas.width, H = canvas.height;
    var LEFT = 92, TOP = 4, ROWS = 32, ROWH = 16, MAPW = W - LEFT - 8, MIN = 512;
    var size = D.size, owners = D.owners, samples = D.samples;
    var sweepRuns = D.sweep ? D.sweep.runs : null;
    // The layer's classes: the sweep's three, or a vendor sweep's six cells.
    var sweepClasses = D.sweep && D.sweep.classes ? D.sweep.classes : ['detected', 'tolerated', 'undetected'];
    var LIGHT = { 'tolerated': true, 'both-accept': true, 'only-nbg-refuses': true };
    // Classes drawn dark enough for white text.
    var DARK = { 'decoded-record': true, 'preserved-opaque': true, 'connection-tail': false };
    var colours = {};
    D.classes.concat(sweepClasses).forEach(function (c) { colours[c] = cssVar(c); });
    var connection = D.views.filter(function (v) { return v[2] === 'connection'; })
      .concat(owners.filter(function (o) { return o[2] === 'connection-tail'; }));
    var nested = D.views.filter(function (v) { return v[2] === 'nested'; });
    var st = { start: 0, len: Math.max(size, 1), cursor: 0, hexOwner: -1, hexFrom: 0 };
    var showConn = $('show-connection'), showNested = $('show-nested'), showSweep = $('show-sweep');

    function bpr() { return Math.max(1, Math.ceil(st.len / ROWS)); }
    function clamp() { st.len = Math.max(Math.min(MIN, size), Math.min(size, st.len)); }
    function ownerIndex(off) { return floorIndex(owners, off, function (o) { return o[0]; }); }
    function byteAt(i, off) {
      var segs = samples[i].segs;
      for (var k = 0; k < segs.length; k++) {
        var s = segs[k][0], hex = segs[k][1];
        if (off >= s && off < s + hex.length / 2) { return parseInt(hex.substr(2 * (off - s), 2), 16); }
      }
      return null;
    }
    function fieldAt(i, off) {
      var f = samples[i].fields, k = floorIndex(f, off, function (x) { return x[0]; });
      return k >= 0 && off < f[k][1] ? f[k] : null;
    }
    function sweepAt(off) {
      if (!sweepRuns) { return null; }
      var k = floorIndex(sweepRuns, off, function (r) { return r[0]; });
      return k >= 0 ? sweepRuns[k][2] : null;
    }
    function describe(off) {
      var i = ownerIndex(off), o = owners[i], f = fieldAt(i, off), b = byteAt(i, off);
      var lines = ['offset ' + hx(off) + ' (' + off + ')', 'owner  #' + i + ' ' + o[3] + ' [' + o[2] + ']'];
      if (f) { lines.push('field  ' + f[2] + ' [' + hx(f[0]) + ', ' + hx(f[1]) + ')', 'value  ' + f[3]); }
      lines.push('byte   ' + (b === null ? 'not embedded (sample bound)' : h2(b)));
      var s = sweepAt(off);
      if (s) { lines.push((D.sweep.classes ? 'loader ' : 'sweep  ') + s); }
      return lines.join('\n');
    }

    function spanRects(s, e, f) {
      var b = bpr(), end = Math.min(size, st.start + b * ROWS);
      s = Math.max(s, st.start); e = Math.min(e, end);
      var a = s;
      while (a < e) {
        var row = Math.floor((a - st.start) / b), rowEnd = Math.min(st.start + (row + 1) * b, e);
        var x = LEFT + (a - st.start - row * b) / b * MAPW;
        var w = Math.max(1, (rowEnd - a) / b * MAPW);
        f(x, TOP + row * ROWH, w, a === s);
        a = rowEnd;
      }
    }
    function eachInWindow(list, f) {
      var end = st.start + bpr() * ROWS;
      var k = Math.max(0, floorIndex(list, st.start, function (x) { return x[0]; }));
      for (; k < list.length && list[k][0] < end; k++) {
        if (list[k][1] > st.start) { f(list[k], k); }
      }
    }
    function draw() {
      var b = bpr(), end = Math.min(size, st.start + b * ROWS);
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, W, H);
      ctx.font = '11px ui-monospace, monospace';
      ctx.textBaseline = 'middle';
      for (var r = 0; r < ROWS && st.start + r * b < size; r++) {
        ctx.fillStyle = '#444';
        ctx.fillText(hx(st.start + r * b), 4, TOP + r * ROWH + ROWH / 2);
      }
      var sweepOn = showSweep && showSweep.checked;
      if (sweepOn) {
        eachInWindow(sweepRuns, function (run) {
          ctx.fillStyle = colours[run[2]];
          spanRects(run[0], run[1], function (x, y, w) { ctx.fillRect(x, y, w, ROWH - 2); });
        });
      } else {
        eachInWindow(owners, function (o) {
          ctx.fillStyle = colours[o[2]];
          spanRects(o[0], o[1], function (x, y, w) { ctx.fillRect(x, y, w, ROWH - 2); });
        });
      }
      if (b <= 16) {
        // Single bytes: cell borders and the embedded values.
        ctx.strokeStyle = 'rgba(255,255,255,0.9)';
        ctx.lineWidth = 1;
        for (var off = st.start; off < end; off++) {
          var row = Math.floor((off - st.start) / b), col = off - st.start - row * b;
          var x = LEFT + col / b * MAPW, y = TOP + row * ROWH, w = MAPW / b;
          ctx.strokeRect(x + 0.5, y + 0.5, w - 1, ROWH - 3);
          var oi = ownerIndex(off), v = byteAt(oi, off);
          var dark = sweepOn ? !LIGHT[sweepAt(off)] : DARK[owners[oi][2]];
          ctx.fillStyle = dark ? '#fff' : '#000';
          ctx.fillText(v === null ? '··' : h2(v), x + w / 2 - 7, y + ROWH / 2 - 1);
        }
      } else if (!sweepOn) {
        ctx.fillStyle = '#000';
        eachInWindow(owners, function (o) {
          spanRects(o[0], o[1], function (x, y, w, first) {
            if (first && w > 7 * o[3].length + 8) { ctx.fillText(o[3], x + 3, y + ROWH / 2 - 1); }
          });
        });
      }
      if (showNested.checked) {
        ctx.strokeStyle = '#3b1f5c';
        ctx.lineWidth = 1;
        ctx.setLineDash([]);
        eachInWindow(nested, function (v) {
          spanRects(v[0], v[1], function (x, y, w) { ctx.strokeRect(x + 0.5, y + 1.5, Math.max(1, w - 1), ROWH - 5); });
        });
      }
      if (showConn.checked) {
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 2;
        ctx.setLineDash([5, 3]);
        connection.forEach(function (v) {
          spanRects(v[0], v[1], function (x, y, w) { ctx.strokeRect(x + 1, y, Math.max(2, w - 2), ROWH - 2); });
        });
        ctx.setLineDash([]);
      }
      // The cursor.
      if (st.cursor >= st.start && st.cursor < end) {
        ctx.strokeStyle = '#d55e00';
        ctx.lineWidth = 3;
        spanRects(st.cursor, st.cursor + 1, function (x, y, w) { ctx.strokeRect(x - 1, y - 1, Math.max(4, w + 2), ROWH); });
      }
      legend(sweepOn);
    }
    function legend(sweepOn) {
      var html = [];
      if (sweepOn) {
        sweepClasses.forEach(function (c) {
          var n = 0;
          sweepRuns.forEach(function (r) { if (r[2] === c) { n += r[1] - r[0]; } });
          html.push('<span><span class="sw c-' + c + '"></span>' + c + ': ' + n + ' bytes</span>');
        });
      } else {
        D.classes.forEach(function (c) {
          var n = 0;
          owners.forEach(function (o) { if (o[2] === c) { n += o[1] - o[0]; } });
          html.push('<span><span class="sw c-' + c + '"></span>' + c + ': ' + n + ' bytes</span>');
        });
      }
      html.push('<span>dashed black outline: connection region</span><span>thin purple outline: nested reference</span>');
      $('legend').innerHTML = html.join('');
      var b = bpr();
      $('where').textContent = 'showing [' + hx(st.start) + ', ' + hx(Math.min(size, st.start + b * ROWS)) + ') at ' + b +
        ' bytes per row; cursor ' + describe(st.cursor).replace(/\n/g, '; ');
    }
    function zoomTo(len, center) {
      st.len = len;
      clamp();
      var b = bpr();
      st.start = Math.floor((center - (ROWS / 2) * b) / b) * b;
      if (st.start + b * ROWS > size) { st.start = Math.ceil((size - b * ROWS) / b) * b; }
      if (st.start < 0) { st.start = 0; }
      draw();
    }
    function moveCursor(off) {
      st.cursor = Math.max(0, Math.min(size - 1, off));
      var b = bpr();
      if (st.cursor < st.start || st.cursor >= st.start + b * ROWS) { zoomTo(st.len, st.cursor); } else { draw(); }
    }

    function openHex(i, focus, from) {
      var o = owners[i], s = o[0], e = o[1], SPAN = 2048;
      if (from === undefined) { from = Math.max(s, focus - SPAN / 2); }
      from = Math.max(s, from) & ~15;
      var to = Math.min(e, Math.max(from, s) + SPAN);
      st.hexOwner = i; st.hexFrom = from;
      var rows = [], f = samples[i].fields, fieldsShown = [];
      for (var row = from; row < to; row += 16) {
        var cells = [];
        for (var off = row; off < row + 16; off++) {
          if (off < s || off >= to) { cells.push('<span class="b">  </span>'); continue; }
          var v = byteAt(i, off), fd = fieldAt(i, off), cls = 'b';
          if (fd) {
            var k = floorIndex(f, off, function (x) { return x[0]; });
            cls += ' f' + (k % 2);
            if (fd[0] === off) { cls += ' fs'; fieldsShown.push(fd); }
          }
          if (v === null) { cls += ' na'; }
          if (off === focus) { cls += ' cur'; }
          var title = hx(off) + (fd ? ' ' + fd[2] + ' = ' + fd[3] : '');
          cells.push('<span class="' + cls + '" title="' + esc(title) + '">' + (v === null ? '··' : h2(v)) + '</span>');
        }
        rows.push('<div class="hexrow"><span class="off">' + ('0000000' + row.toString(16)).slice(-8) + '</span>  ' + cells.join(' ') + '</div>');
      }
      var nav = '';
      if (from > s) { nav += '<button type="button" id="hex-prev">Previous 2 KiB</button> '; }
      if (to < e) { nav += '<button type="button" id="hex-next">Next 2 KiB</button>'; }
      var fl = fieldsShown.slice(0, 200).map(function (fd) {
        return '<li><code>[' + hx(fd[0]) + ', ' + hx(fd[1]) + ')</code> ' + esc(fd[2]) + ' = ' + esc(fd[3]) + '</li>';
      }).join('');
      $('hex').innerHTML = '<div class="hexpanel" id="hexpanel" data-owner="' + i + '" data-from="' + from + '" data-to="' + to + '">' +
        '<h3>Owner #' + i + ': ' + esc(o[3]) + ' [' + esc(o[2]) + '] [' + hx(s) + ', ' + hx(e) + '), ' + (e - s) + ' bytes; showing [' + hx(from) + ', ' + hx(to) + ')</h3>' +
        '<p class="note">A thick left border starts each field (alternating shades); hover a byte for its field and value; <code>··</code> marks bytes outside the embedded sample.</p>' +
        nav + '<div class="hexrows">' + rows.join('') + '</div>' + (fl ? '<ul class="fields">' + fl + '</ul>' : '') + '</div>';
      if ($('hex-prev')) { $('hex-prev').addEventListener('click', function () { openHex(i, focus, from - SPAN); }); }
      if ($('hex-next')) { $('hex-next').addEventListener('click', function () { openHex(i, focus, to); }); }
      document.querySelectorAll('#owners tr.sel').forEach(function (r) { r.classList.remove('sel'); });
      var tr = document.querySelector('#owners tr[data-owner="' + i + '"]');
      if (tr) { tr.classList.add('sel'); }
    }

    function offsetAt(ev) {
      var r = canvas.getBoundingClientRect();
      var x = (ev.clientX - r.left) * W / r.width, y = (ev.clientY - r.top) * H / r.height;
      var row = Math.floor((y - TOP) / ROWH);
      if (row < 0 || row >= ROWS || x < LEFT || x >= LEFT + MAPW) { return null; }
      var b = bpr(), off = st.start + row * b + Math.floor((x - LEFT) / MAPW * b);
      return off < size ? off : null;
    }
    var tip = $('tip');
    canvas.addEventListener('mousemove', function (ev) {
      var off = offsetAt(ev);
      if (off === null) { tip.hidden = true; return; }
      tip.textContent = describe(off);
      tip.hidden = false;
      var r = canvas.getBoundingClientRect();
      tip.style.left = Math.min(ev.clientX - r.left + 14, r.width - 300) + 'px';
      tip.style.top = (ev.clientY - r.top + 14) + 'px';
    });
    canvas.addEventListener('mouseleave', function () { tip.hidden = true; });
    canvas.addEventListener('click', function (ev) {
      var off = offsetAt(ev);
      if (off === null) { return; }
      st.cursor = off;
      draw();
      openHex(ownerIndex(off), off);
    });
    canvas.addEventListener('wheel', function (ev) {
      var off = offsetAt(ev);
      if (off === null) { return; }
      ev.preventDefault();
      zoomTo(ev.deltaY < 0 ? st.len / 4 : st.len * 4, off);
    }, { passive: false });
    canvas.addEventListener('keydown', function (ev) {
      var b = bpr(), step = Math.max(1, Math.floor(b / 16));
      switch (ev.key) {
        case 'ArrowRight': moveCursor(st.cursor + step); break;
        case 'ArrowLeft': moveCursor(st.cursor - step); break;
        case 'ArrowDown': moveCursor(st.cursor + b); break;
        case 'ArrowUp': moveCursor(st.cursor - b); break;
        case 'PageDown': moveCursor(st.cursor + b * ROWS); break;
        case 'PageUp': moveCursor(st.cursor - b * ROWS); break;
        case 'Home': moveCursor(0); break;
        case 'End': moveCursor(size - 1); break;
        case '+': case '=': zoomTo(st.len / 4, st.cursor); break;
        case '-': case '_': zoomTo(st.len * 4, st.cursor); break;
        case '0': zoomTo(size, 0); break;
        case 'Enter': case ' ': openHex(ownerIndex(st.cursor), st.cursor); break;
        default: return;
      }
      ev.preventDefault();
    });
    $('zoom-in').addEventListener('click', function () { zoomTo(st.len / 4, st.cursor); });
    $('zoom-out').addEventListener('click', function () { zoomTo(st.len * 4, st.cursor); });
    $('zoom-all').addEventListener('click', function () { zoomTo(size, 0); });
    [showConn, showNested, showSweep].forEach(function (c) { if (c) { c.addEventListener('change', draw); } });
    document.querySelectorAll('#owners button.show').forEach(function (btn) {
      btn.addEventListener('click', function () {
        var i = parseInt(btn.getAttribute('data-owner'), 10), o = owners[i];
        st.cursor = o[0];
        zoomTo(Math.max(MIN, (o[1] - o[0]) * 1.25), o[0] + (o[1] - o[0]) / 2);
        openHex(i, o[0]);
        canvas.scrollIntoView({ block: 'nearest' });
      });
    });

    var p = hashParams();
    if (p.sweep && showSweep) { showSweep.checked = true; }
    if (p.offset !== undefined) {
      var off = Math.max(0, Math.min(size - 1, num(p.offset)));
      st.cursor = off;
      zoomTo(p.zoom ? num(p.zoom) : MIN, off);
      openHex(ownerIndex(off), off);
    } else {
      draw();
    }
    if (p.keys) { keyCheck(canvas, function (log) {
      key(canvas, '0');
      if (st.len !== size) { log.push('0 did not show the whole file'); }
      key(canvas, '+');
      if (size > MIN && st.len >= size) { log.push('+ did not zoom in'); }
      var c0 = st.cursor;
      key(canvas, 'ArrowRight');
      if (st.cursor <= c0) { log.push('ArrowRight did not move the cursor'); }
      c0 = st.cursor;
      key(canvas, 'ArrowDown');
      if (st.cursor <= c0) { log.push('ArrowDown did not move the cursor'); }
      key(canvas, 'Enter');
      if (!$('hexpanel') || $('hexpanel').getAttribute('data-owner') !== String(ownerIndex(st.cursor))) {
        log.push('Enter did not open the hex view of the cursor');
      }
      key(canvas, '-');
      if (st.len !== size) { log.push('- did not zoom out'); }
      var btn = document.querySelectorAll('#owners button.show')[1];
      btn.focus();
      btn.click();
      if ($('hexpanel').getAttribute('data-owner') !== '1') { log.push('Show did not open owner 1'); }
      if (showSweep) {
        showSweep.click();
        if ($('legend').textContent.indexOf(sweepClasses[0] + ': ') < 0) { log.push('the sweep toggle did not switch the legend'); }
        showSweep.click();
      }
    }); }
    // Evidence for the browser test that the map was painted.
    var px = ctx.getImageData(0, 0, W, H).data, painted = 0;
    for (var q = 0; q < px.length; q += 4) { if (px[q] !== 255 || px[q + 1] !== 255 || px[q + 2] !== 255) { painted++; } }
    canvas.setAttribute('data-painted', String(painted));
  }

  try {
    if (D.kind === 'graph') { graphPage(); }
    else if (D.kind === 'diff') { diffPage(); }
    else if (D.kind === 'capture') { capturePage(); }
    else if (D.kind === 'damaged') { /* tables only: B does not parse */ }
    else { throw new Error('unknown report kind ' + D.kind); }
    if (body.getAttribute('data-status') !== 'error') {
      body.setAttribute('data-status', 'ready');
      $('status').textContent = 'Interactive.';
    }
  } catch (e) {
    fail('Uncaught ' + (e && e.stack ? e.stack : e));
  }
  body.setAttribute('data-init-ms', String(Math.round(performance.now() - t0)));
})();
