// The terminal side of the live view: redraws in place on the alternate screen (or prints
// frames one after another when the output is not a terminal), and reads single keys.

export interface Screen {
  width(): number;
  draw(lines: readonly string[]): void;
  /** Leaves the alternate screen and shows the cursor again; safe to call twice. */
  close(): void;
}

export function openScreen(out: NodeJS.WriteStream, inPlace: boolean): Screen {
  let open = true;
  if (inPlace) out.write("\x1b[?1049h\x1b[?25l");
  return {
    width: () => (out.isTTY ? out.columns : 160),
    draw(lines) {
      if (!open) return;
      // Home, each line cleared to its end, then the rest of the screen cleared: no flicker.
      if (inPlace)
        out.write(
          `\x1b[H${fitRows(lines, out.rows)
            .map((l) => `${l}\x1b[K`)
            .join("\n")}\n\x1b[J`,
        );
      else out.write(`${lines.join("\n")}\n\n`);
    },
    close() {
      if (!open) return;
      open = false;
      if (inPlace) out.write("\x1b[?25h\x1b[?1049l");
    },
  };
}

/**
 * Calls `onKey` with each key typed. A terminal is put in raw mode (so Ctrl-C arrives as
 * "\x03" and is the handler's to act on); a pipe is read as it is, one character per key.
 * Returns a function that restores the input.
 */
export function readKeys(input: NodeJS.ReadStream, onKey: (key: string) => void): () => void {
  const raw = input.isTTY === true;
  if (raw) input.setRawMode(true);
  input.setEncoding("utf8");
  const onData = (chunk: string) => {
    for (const key of chunk) if (key !== "\n" && key !== "\r") onKey(key);
  };
  input.on("data", onData);
  input.resume();
  return () => {
    input.off("data", onData);
    if (raw) input.setRawMode(false);
    input.pause();
  };
}

/**
 * A frame taller than the terminal would scroll its top away on every redraw: keep the top
 * and the last four lines (what the last key did, the keys and what to try), and say how much
 * is left out.
 */
export function fitRows(lines: readonly string[], rows: number | undefined): readonly string[] {
  if (!rows || lines.length < rows) return lines;
  const tail = lines.slice(-4);
  const head = lines.slice(0, Math.max(0, rows - tail.length - 2));
  return [...head, `… ${lines.length - head.length - tail.length} more lines: make the terminal taller`, ...tail];
}
