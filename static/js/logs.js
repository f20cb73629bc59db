// Slipway: the service log page's behaviour (views/partial/service_logs.templ).
// htmx's SSE extension appends each batch of lines the server sends; this
// file keeps the box pinned to the bottom unless the reader scrolled up,
// drops batches it already has (a reconnect resends from the page's start),
// and pauses: while paused, batches are held and appended on resume.
// Without script the page is the last lines and a Refresh link.
(function () {
  "use strict";

  var maxLines = 5000;

  function setup() {
    var box = document.querySelector("[data-log-box]");
    if (!box) {
      return;
    }
    var list = box.querySelector("[data-log-lines]");
    var pause = document.querySelector("[data-log-pause]");
    var jump = document.querySelector("[data-log-jump]");
    var status = document.querySelector("[data-log-status]");
    var held = [];
    var heldLines = 0;
    var paused = false;
    // stick: the box was at the bottom just before lines were added, so
    // it follows them; a reader who scrolled up stays where they are.
    var stick = true;
    var last = list.lastElementChild ? list.lastElementChild.getAttribute("data-ts") : "";

    function atBottom() {
      return box.scrollHeight - box.scrollTop - box.clientHeight < 4;
    }
    function setPinned(on) {
      box.setAttribute("data-pinned", on ? "true" : "false");
      if (on) {
        jump.hidden = true;
      }
    }
    function toBottom() {
      box.scrollTop = box.scrollHeight;
      setPinned(true);
    }
    function say(text) {
      status.textContent = text;
    }
    function trim() {
      while (list.children.length > maxLines) {
        list.removeChild(list.firstElementChild);
      }
    }
    function appended() {
      var empty = box.querySelector("[data-log-empty]");
      if (empty) {
        empty.remove();
      }
      trim();
      if (stick) {
        toBottom();
      } else {
        setPinned(false);
        jump.hidden = false;
      }
    }

    status.setAttribute("role", "status");
    say("Following new lines as they are written.");
    pause.hidden = false;
    toBottom();

    box.addEventListener("scroll", function () {
      if (atBottom()) {
        setPinned(true);
      } else {
        box.setAttribute("data-pinned", "false");
      }
    });
    jump.addEventListener("click", toBottom);
    pause.addEventListener("click", function () {
      paused = !paused;
      pause.setAttribute("aria-pressed", paused ? "true" : "false");
      pause.textContent = paused ? "Resume" : "Pause";
      if (paused) {
        say("Paused: new lines are held until you resume.");
        return;
      }
      if (held.length > 0) {
        stick = atBottom();
        list.insertAdjacentHTML("beforeend", held.join(""));
        held = [];
        heldLines = 0;
        appended();
      }
      say("Following new lines as they are written.");
    });

    list.addEventListener("htmx:sseBeforeMessage", function (evt) {
      var id = evt.detail.lastEventId || "";
      // Times are fixed-width UTC, so they compare as strings.
      if (id !== "" && id <= last) {
        evt.preventDefault();
        return;
      }
      last = id || last;
      if (paused) {
        evt.preventDefault();
        held.push(evt.detail.data);
        heldLines += (evt.detail.data.match(/<li[ >]/g) || []).length;
        say("Paused: " + heldLines + (heldLines === 1 ? " new line" : " new lines") + " held until you resume.");
        return;
      }
      stick = atBottom();
    });
    list.addEventListener("htmx:sseMessage", appended);
    box.addEventListener("htmx:sseError", function () {
      say("The connection dropped; reconnecting…");
    });
    box.addEventListener("htmx:sseOpen", function () {
      if (!paused) {
        say("Following new lines as they are written.");
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
