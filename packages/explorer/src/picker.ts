/**
 * The ticker search: an ARIA 1.2 combobox over the exchange's `/tickers` list (loaded once per exchange and key),
 * filtered as you type — tickers starting with the text first, then those containing it, case-insensitively.
 * ↓/↑ move through the options, Enter picks, Escape closes; the pointer works too.
 */

const SHOWN = 50;

export function filterTickers(all: readonly string[], text: string, limit = SHOWN): string[] {
  const t = text.trim().toLowerCase();
  if (t === '') return all.slice(0, limit);
  const starts: string[] = [];
  const contains: string[] = [];
  for (const ticker of all) {
    const i = ticker.toLowerCase().indexOf(t);
    if (i === 0) starts.push(ticker);
    else if (i > 0) contains.push(ticker);
    if (starts.length >= limit) break;
  }
  return [...starts, ...contains].slice(0, limit);
}

export class TickerPicker {
  private all: readonly string[] = [];
  private shown: string[] = [];
  private active = -1;

  constructor(
    private readonly input: HTMLInputElement,
    private readonly list: HTMLUListElement,
    private readonly count: HTMLElement,
    private readonly onPick: (ticker: string) => void,
  ) {
    input.addEventListener('input', () => this.open());
    input.addEventListener('keydown', (e) => this.key(e));
    input.addEventListener('blur', () => setTimeout(() => this.close(), 150));
    list.addEventListener('mousedown', (e) => e.preventDefault());
    list.addEventListener('click', (e) => {
      const li = (e.target as HTMLElement).closest('li');
      if (li?.dataset.ticker) this.pick(li.dataset.ticker);
    });
  }

  /** The exchange's tickers (undefined: loading). */
  setTickers(all: readonly string[] | undefined): void {
    this.all = all ?? [];
    this.count.textContent = all === undefined ? '(loading…)' : `(${all.length} with data in your window)`;
    if (!this.list.hidden) this.open();
  }

  setValue(ticker: string): void {
    this.input.value = ticker;
    this.close();
  }

  private open(): void {
    this.shown = filterTickers(this.all, this.input.value);
    this.active = this.shown.length ? 0 : -1;
    this.list.replaceChildren(
      ...this.shown.map((t, i) => {
        const li = document.createElement('li');
        li.id = `ticker-option-${i}`;
        li.setAttribute('role', 'option');
        li.dataset.ticker = t;
        li.textContent = t;
        return li;
      }),
    );
    if (!this.shown.length) {
      const li = document.createElement('li');
      li.className = 'empty';
      li.setAttribute('role', 'option');
      li.setAttribute('aria-disabled', 'true');
      li.textContent = this.all.length ? 'No ticker matches' : 'No ticker with data in your window';
      this.list.append(li);
    }
    this.list.hidden = false;
    this.input.setAttribute('aria-expanded', 'true');
    this.highlight();
  }

  private close(): void {
    this.list.hidden = true;
    this.input.setAttribute('aria-expanded', 'false');
    this.input.removeAttribute('aria-activedescendant');
    this.active = -1;
  }

  private highlight(): void {
    for (const [i, li] of [...this.list.children].entries()) {
      li.setAttribute('aria-selected', String(i === this.active));
    }
    const li = this.active >= 0 ? this.list.children[this.active] : undefined;
    if (li) {
      this.input.setAttribute('aria-activedescendant', li.id);
      li.scrollIntoView({ block: 'nearest' });
    } else this.input.removeAttribute('aria-activedescendant');
  }

  private key(e: KeyboardEvent): void {
    switch (e.key) {
      case 'ArrowDown':
        e.preventDefault();
        if (this.list.hidden) this.open();
        else if (this.shown.length) this.active = Math.min(this.active + 1, this.shown.length - 1);
        this.highlight();
        return;
      case 'ArrowUp':
        e.preventDefault();
        if (!this.list.hidden && this.shown.length) this.active = Math.max(this.active - 1, 0);
        this.highlight();
        return;
      case 'Enter': {
        e.preventDefault();
        const t = this.list.hidden ? undefined : this.shown[this.active];
        if (t !== undefined) this.pick(t);
        else {
          // Enter on a typed ticker: exactly one match, or the text as typed (the service decides).
          const typed = this.input.value.trim();
          const exact = this.all.find((x) => x.toLowerCase() === typed.toLowerCase());
          if (typed) this.pick(exact ?? typed);
        }
        return;
      }
      case 'Escape':
        this.close();
        return;
    }
  }

  private pick(ticker: string): void {
    this.input.value = ticker;
    this.close();
    this.onPick(ticker);
  }
}
