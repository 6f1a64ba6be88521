// A controller's own status writes that its cache does not show yet. Right after a write, a
// sync woken by some other event still reads the old object from the cache, computes the same
// change again and writes it on a stale resourceVersion: a 409 and a retry. Until the cache has
// moved past the version a write replaced, the controller leaves that object alone; the write's
// own watch event brings the next sync. resourceVersions are only compared for equality.
export class OwnWrites {
  /** Per key: the resourceVersion the cache had when this controller wrote over it. */
  private readonly replaced = new Map<string, string>();

  /** After a successful write of `key` over `fromRv`, answered with `toRv` (the same when the server found nothing to change). */
  wrote(key: string, fromRv: string | undefined, toRv: string | undefined): void {
    if (fromRv !== undefined && toRv !== undefined && fromRv !== toRv) this.replaced.set(key, fromRv);
  }

  /** Whether the cache, at `cachedRv`, still shows what this controller last wrote over. */
  behind(key: string, cachedRv: string | undefined): boolean {
    const replaced = this.replaced.get(key);
    if (replaced === undefined) return false;
    if (replaced === cachedRv) return true;
    this.replaced.delete(key);
    return false;
  }

  forget(key: string): void {
    this.replaced.delete(key);
  }
}
