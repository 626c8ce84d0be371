// Runs in <head> before the page is drawn: the theme the person chose last (or their system's), so a
// dark-theme page never flashes light.
(function () {
  var chosen = null;
  try { chosen = localStorage.getItem("tessera-theme"); } catch (e) { /* storage may be blocked */ }
  if (location.hash === "#theme=night" || location.hash === "#theme=dark") chosen = "dark";
  if (location.hash === "#theme=light") chosen = "light";
  if (!chosen) chosen = window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  document.documentElement.dataset.theme = chosen;
  // Charts are drawn on the server: it reads the theme from this cookie (plugins/app/results.py).
  document.cookie = "tessera-theme=" + chosen + "; path=/; SameSite=Lax";
})();
