// kubectl informer report: zoom, hover and object selection. Every text it shows comes from
// the page's own attributes and is set with textContent, never as HTML.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var charts = Array.prototype.slice.call(document.querySelectorAll("svg.chart"));
  var axis = document.getElementById("axis");
  var rangeText = document.getElementById("range");
  var view = { a: 0, b: data.span };

  function clock(sec) {
    var d = new Date(data.startMs + sec * 1000);
    var s = d.toISOString().slice(11, 23);
    return (view.b - view.a) > 120 ? s.slice(0, 8) : s.slice(0, 12);
  }

  function apply() {
    var vb = view.a + " 0 " + (view.b - view.a) + " 100";
    charts.forEach(function (c) { c.setAttribute("viewBox", vb); });
    axis.textContent = "";
    var n = 8;
    for (var i = 0; i <= n; i++) {
      var t = view.a + (view.b - view.a) * i / n;
      var span = document.createElement("span");
      span.style.left = (100 * i / n) + "%";
      if (i === 0) { span.style.transform = "none"; }
      if (i === n) { span.style.transform = "translateX(-100%)"; }
      span.textContent = clock(t);
      axis.appendChild(span);
    }
    rangeText.textContent = clock(view.a) + " to " + clock(view.b) + " (" + (view.b - view.a).toFixed(1) + "s)";
  }

  function zoom(a, b) {
    a = Math.max(0, Math.min(a, data.span));
    b = Math.max(0, Math.min(b, data.span));
    if (b - a < data.bucketMs / 1000) {
      return false;
    }
    view = { a: a, b: b };
    apply();
    return true;
  }

  function secAt(chart, clientX) {
    var r = chart.getBoundingClientRect();
    return view.a + (view.b - view.a) * (clientX - r.left) / r.width;
  }

  // Drag across any chart to zoom to that range.
  var drag = null;
  charts.forEach(function (c) {
    c.addEventListener("mousedown", function (e) {
      if (e.button !== 0) { return; }
      var box = document.createElement("div");
      box.className = "brush";
      c.parentNode.appendChild(box);
      drag = { chart: c, x0: e.clientX, box: box };
      e.preventDefault();
    });
    c.addEventListener("dblclick", function () { zoom(0, data.span); });
  });
  document.addEventListener("mousemove", function (e) {
    if (drag) {
      var r = drag.chart.getBoundingClientRect();
      var x0 = Math.min(drag.x0, e.clientX) - r.left, x1 = Math.max(drag.x0, e.clientX) - r.left;
      drag.box.style.left = Math.max(0, x0) + "px";
      drag.box.style.width = Math.max(0, Math.min(r.width, x1) - Math.max(0, x0)) + "px";
    }
    hover(e);
  });
  document.addEventListener("mouseup", function (e) {
    if (!drag) { return; }
    var d = drag;
    drag = null;
    d.box.remove();
    if (Math.abs(e.clientX - d.x0) > 3) {
      var a = secAt(d.chart, Math.min(d.x0, e.clientX)), b = secAt(d.chart, Math.max(d.x0, e.clientX));
      zoom(a, b);
    }
  });
  document.getElementById("reset").addEventListener("click", function () { zoom(0, data.span); });

  // Hover: what a marker, a bar or a queue line is.
  var tip = document.getElementById("tip");
  function hover(e) {
    var el = e.target && e.target.closest ? e.target.closest("[data-tip]") : null;
    if (!el || drag) {
      tip.hidden = true;
      return;
    }
    tip.textContent = el.getAttribute("data-tip");
    tip.hidden = false;
    var x = Math.min(e.clientX + 12, window.innerWidth - tip.offsetWidth - 4);
    tip.style.left = Math.max(0, x) + "px";
    tip.style.top = (e.clientY + 14) + "px";
  }

  // Object selection: the select, and the history buttons of the table.
  var select = document.getElementById("object");
  function show(id) {
    document.querySelectorAll(".history").forEach(function (h) { h.hidden = h.id !== id; });
    document.querySelectorAll("#top tr").forEach(function (tr) {
      tr.classList.toggle("selected", tr.getAttribute("data-object") === id);
    });
    if (select && select.value !== id) { select.value = id; }
  }
  if (select) {
    select.addEventListener("change", function () { show(select.value); });
    document.querySelectorAll("button.show").forEach(function (b) {
      b.addEventListener("click", function () {
        show(b.getAttribute("data-object"));
        document.getElementById("history").scrollIntoView();
      });
    });
    if (select.value) { show(select.value); }
  }

  apply();
  window.kubectlInformerReport = {
    zoom: zoom,
    show: show,
    view: function () { return { a: view.a, b: view.b }; }
  };
  document.body.setAttribute("data-ready", "true");
})();
