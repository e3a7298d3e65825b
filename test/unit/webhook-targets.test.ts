/**
 * Which addresses a webhook may reach: every non-public range, in the textual forms an address can
 * take (as DNS answers it, as the URL parser rewrites it, compressed or not, with brackets or a
 * zone), and the public addresses that must stay reachable. The subscribe-time check runs inside
 * an HTTP request, so it is bounded in time whatever the resolver does.
 */
import test from 'ava';
import {
  REFUSED_TARGET,
  ipLiteralHost,
  isNonPublicAddress,
  refuseTarget,
} from '../../db/rules/webhook-targets.ts';
import { notFound, testResolver } from '../helpers/webhooks.ts';

const NON_PUBLIC: Record<string, string[]> = {
  'this network 0.0.0.0/8': ['0.0.0.0', '0.1.2.3'],
  'private 10/8, 172.16/12, 192.168/16': ['10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1'],
  'carrier-grade NAT 100.64/10': ['100.64.0.1', '100.127.255.254'],
  'loopback 127/8': ['127.0.0.1', '127.255.255.254'],
  'link-local and cloud metadata 169.254/16': ['169.254.169.254', '169.254.0.1'],
  'IETF 192.0.0.0/24': ['192.0.0.8'],
  'documentation 192.0.2/24, 198.51.100/24, 203.0.113/24': ['192.0.2.1', '198.51.100.7', '203.0.113.200'],
  '6to4 relay 192.88.99/24': ['192.88.99.1'],
  'benchmarking 198.18/15': ['198.18.0.1', '198.19.255.255'],
  'multicast, reserved, broadcast': ['224.0.0.1', '239.255.255.255', '240.0.0.1', '255.255.255.255'],
  'IPv6 unspecified, loopback, IPv4-compatible ::/96': [
    '::',
    '::1',
    '0:0:0:0:0:0:0:1',
    '::127.0.0.1',
    '::8.8.8.8',
  ],
  'IPv4-mapped ::ffff:0:0/96': [
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::FFFF:7F00:0001',
    '0:0:0:0:0:ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::ffff:8.8.8.8',
  ],
  'IPv4-translated ::ffff:0:0:0/96': ['::ffff:0:127.0.0.1', '::ffff:0:7f00:1', '::ffff:0:808:808'],
  'NAT64 64:ff9b::/96 and 64:ff9b:1::/48': ['64:ff9b::7f00:1', '64:ff9b::127.0.0.1', '64:ff9b:1::1'],
  'discard-only 100::/64': ['100::1'],
  'Teredo 2001::/32': ['2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  'documentation 2001:db8::/32, 3fff::/20': ['2001:db8::1', '2001:0db8:85a3::8a2e:370:7334', '3fff::1'],
  '6to4 2002::/16': ['2002:7f00:1::', '2002:a9fe:a9fe::1'],
  'unique local fc00::/7': ['fc00::1', 'fd12:3456:789a::1'],
  'link-local fe80::/10': ['fe80::1', 'febf::1'],
  'site-local fec0::/10': ['fec0::1', 'feff::1'],
  'multicast ff00::/8': ['ff02::1', 'ff05::2'],
  'brackets and zone ids': ['[::1]', '[::ffff:7f00:1]', 'fe80::1%eth0', '[fe80::1%25eth0]'],
  'not an IP address at all': ['', 'localhost', 'example.com', '127.1', '0x7f000001', '1.2.3.256', '::g'],
};

const PUBLIC = [
  '93.184.216.34',
  '8.8.8.8',
  '1.1.1.1',
  '100.63.255.255',
  '100.128.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.1',
  '192.88.98.1',
  '198.17.255.255',
  '198.20.0.1',
  '223.255.255.255',
  '2606:4700:4700::1111',
  '2a00:1450:4001:80b::200e',
  '[2606:4700:4700::1111]',
  '2001:4860:4860::8888',
  '2003::1',
  '64:ff9b:2::1',
];

for (const [range, addresses] of Object.entries(NON_PUBLIC)) {
  test(`non-public: ${range}`, (t) => {
    for (const address of addresses) t.true(isNonPublicAddress(address), address);
  });
}

test('public addresses stay reachable, next to the edges of the refused ranges', (t) => {
  for (const address of PUBLIC) t.false(isNonPublicAddress(address), address);
});

test('a URL host is an IP literal in whatever form the URL parser leaves it', (t) => {
  t.is(ipLiteralHost('http://[::ffff:127.0.0.1]:8080/x'), '::ffff:7f00:1');
  t.is(ipLiteralHost('http://0x7f000001/x'), '127.0.0.1');
  t.is(ipLiteralHost('http://2130706433/x'), '127.0.0.1');
  t.is(ipLiteralHost('https://partner.example.com/x'), undefined);
  for (const url of ['http://[::ffff:127.0.0.1]/', 'http://0x7f.1/', 'http://[fe80::1]/'])
    t.true(isNonPublicAddress(ipLiteralHost(url)!), url);
});

test('the subscribe-time check refuses names with any non-public answer and names that do not resolve', async (t) => {
  const dns = testResolver((host) =>
    host === 'public.example' ? '93.184.216.34' : host === 'inside.example' ? '10.0.0.7' : notFound(host),
  );
  t.is(await refuseTarget('https://public.example/h', false, dns.lookup), undefined);
  // One reason for a private answer and for no answer, naming neither the host nor the address.
  t.is(await refuseTarget('https://inside.example/h', false, dns.lookup), REFUSED_TARGET);
  t.is(await refuseTarget('https://nowhere.example/h', false, dns.lookup), REFUSED_TARGET);
  t.is(await refuseTarget('https://[::ffff:a9fe:a9fe]/h', false, dns.lookup), REFUSED_TARGET);
  t.notRegex(REFUSED_TARGET, /example|10\.0|a9fe/);
  t.is(
    await refuseTarget('https://inside.example/h', true, dns.lookup),
    undefined,
    'allowed when private is',
  );
});

test('the subscribe-time check gives up on a resolver that never answers: the host does not resolve', async (t) => {
  const silent = testResolver(() => null);
  const boundMs = 200;
  const started = performance.now();
  const refusal = await Promise.race([
    refuseTarget('https://hang.example/h', false, silent.lookup, boundMs),
    new Promise<string>((resolve) => setTimeout(resolve, 3000, 'still waiting after 3 s').unref()),
  ]);
  t.is(refusal, REFUSED_TARGET);
  t.true(performance.now() - started < boundMs + 1500, 'within the bound, with a margin for a busy machine');
  t.is(silent.calls.length, 1);
});
