// Copy buttons beside secrets shown once. Loaded from this origin (the CSP allows no inline
// script); without it the buttons stay hidden and the secret can still be selected and copied.
document.addEventListener('DOMContentLoaded', () => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const target = document.getElementById(button.dataset.copy);
    if (!target || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(target.textContent.trim());
        button.textContent = 'Copied';
      } catch {
        button.textContent = 'Select and copy';
      }
    });
  }
});
