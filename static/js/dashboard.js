// Slipway: small behaviours every dashboard page may use, loaded by the
// layout. Everything here is an enhancement: without script the page works
// (a secret shown once can still be selected and copied by hand).
(function () {
  "use strict";

  // Copy buttons: <button data-copy="ID" hidden> copies the text of the
  // element with that id. They stay hidden where the clipboard cannot be
  // written (no script, or a page not served over a secure context).
  function setupCopy(root) {
    if (!navigator.clipboard) {
      return;
    }
    root.querySelectorAll("[data-copy]").forEach(function (btn) {
      if (btn.dataset.copyReady) {
        return;
      }
      btn.dataset.copyReady = "true";
      btn.hidden = false;
      btn.addEventListener("click", function () {
        var source = document.getElementById(btn.getAttribute("data-copy"));
        if (!source) {
          return;
        }
        navigator.clipboard.writeText(source.textContent.trim()).then(function () {
          btn.textContent = "Copied";
          btn.setAttribute("data-copied", "true");
        }, function () {
          btn.textContent = "Copy failed: select the text";
        });
      });
    });
  }

  function setup() {
    setupCopy(document);
    document.body.addEventListener("htmx:afterSwap", function (evt) {
      setupCopy(evt.target);
    });
    // A failed htmx request whose answer is the error's message for the
    // message area (X-Slipway-Error, swapped out of band): show it rather
    // than let htmx drop a 4xx or 5xx answer without a word.
    document.body.addEventListener("htmx:beforeSwap", function (evt) {
      var xhr = evt.detail.xhr;
      if (xhr.status >= 400 && xhr.getResponseHeader("X-Slipway-Error")) {
        evt.detail.shouldSwap = true;
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
