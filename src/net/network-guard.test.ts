import { isPublicName } from './network-guard';

describe('public names', () => {
  it.each(['example.com', 'www.example.com', 'bank.co.uk', 'shop.xn--p1ai', 'example.com.'])('%s is public', (host) => {
    expect(isPublicName(host)).toBe(true);
  });
  it.each(['localhost', 'redis', 'temporal-ui', 'db.internal', 'printer.local', 'api.svc.cluster.local', 'host.test', '10.0.0.1', '[::1]', 'box.lan', 'site.example'])('%s is not', (host) => {
    expect(isPublicName(host)).toBe(false);
  });
});
