// Hands out pod IPv4 addresses from a CIDR, skipping network and broadcast addresses; an address
// is handed out again only after the pod holding it is gone.
export class IpAllocator {
  private readonly first: number;
  private readonly size: number;
  private readonly byOwner = new Map<string, string>();
  private readonly owners = new Map<string, string>();
  private cursor = 0;

  constructor(cidr: string) {
    const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr);
    if (!m) throw new Error(`pod CIDR ${cidr} is not an IPv4 CIDR`);
    const parts = m.slice(1, 5).map(Number);
    const bits = Number(m[5]);
    if (parts.some((p) => p > 255) || bits < 1 || bits > 30)
      throw new Error(`pod CIDR ${cidr} is not a usable IPv4 CIDR`);
    const base = ((parts[0]! << 24) >>> 0) + (parts[1]! << 16) + (parts[2]! << 8) + parts[3]!;
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    this.first = ((base & mask) >>> 0) + 1;
    this.size = 2 ** (32 - bits) - 2;
  }

  private static text(n: number): string {
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
  }

  contains(ip: string): boolean {
    const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
    if (!m) return false;
    const n = ((Number(m[1]) << 24) >>> 0) + (Number(m[2]) << 16) + (Number(m[3]) << 8) + Number(m[4]);
    return n >= this.first && n < this.first + this.size;
  }

  /** Records an address already in use (found on a pod at start-up). */
  reserve(owner: string, ip: string): void {
    if (!this.contains(ip) || this.owners.has(ip)) return;
    this.owners.set(ip, owner);
    this.byOwner.set(owner, ip);
  }

  /** The owner's address, allocating the next free one; undefined when the range is full. */
  allocate(owner: string): string | undefined {
    const existing = this.byOwner.get(owner);
    if (existing) return existing;
    for (let i = 0; i < this.size; i++) {
      const n = this.first + ((this.cursor + i) % this.size);
      const ip = IpAllocator.text(n);
      if (this.owners.has(ip)) continue;
      this.cursor = (this.cursor + i + 1) % this.size;
      this.owners.set(ip, owner);
      this.byOwner.set(owner, ip);
      return ip;
    }
    return undefined;
  }

  release(owner: string): void {
    const ip = this.byOwner.get(owner);
    if (ip === undefined) return;
    this.byOwner.delete(owner);
    this.owners.delete(ip);
  }

  get inUse(): number {
    return this.owners.size;
  }
}
