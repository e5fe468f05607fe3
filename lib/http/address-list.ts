import proxyaddr from 'proxy-addr';

/**
 * A matcher for a list of addresses and CIDR ranges (and proxy-addr's names `loopback`,
 * `linklocal`, `uniquelocal`), as proxy-addr compiles them: `(address, hop) => boolean`. A range
 * of prefix length 0 (`0.0.0.0/0`, `::/0`: every address), which proxy-addr refuses, is read as
 * its two halves. Throws proxy-addr's TypeError naming a bad entry.
 */
export function compileAddressList(entries: readonly string[]): (address: string, hop: number) => boolean {
  return proxyaddr.compile(entries.flatMap(withoutZeroPrefix));
}

function withoutZeroPrefix(entry: string): string[] {
  const slash = entry.lastIndexOf('/');
  if (slash === -1 || entry.slice(slash + 1).trim() !== '0') return [entry];
  const address = entry.slice(0, slash).trim();
  // Any address with /0 is every address of its family; proxy-addr checks that the address is one.
  proxyaddr.compile([`${address}/1`]);
  return address.includes(':') ? ['::/1', '8000::/1'] : ['0.0.0.0/1', '128.0.0.0/1'];
}
