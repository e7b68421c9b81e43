export {
  startFakeHcloud,
  FAKE_HCLOUD_TOKEN,
  type FakeHcloud,
  type FakeHcloudOptions,
} from './fake-hcloud.ts';
export { FakeHcloudFaults, FAKE_HCLOUD_BAD_GATEWAY_HTML, type FakeHcloudFault } from './faults.ts';
export { FakeHcloudRequestLog, type FakeHcloudRequest, type FakeHcloudRequestFilter } from './request-log.ts';
export {
  FAKE_HCLOUD_LOCATIONS,
  FAKE_HCLOUD_SERVER_STATUSES,
  FakeHcloudNetworks,
  FakeHcloudServers,
  type FakeHcloudIpv4,
  type FakeHcloudIpv6,
  type FakeHcloudLocation,
  type FakeHcloudNetwork,
  type FakeHcloudNetworkInput,
  type FakeHcloudPrivateNet,
  type FakeHcloudServer,
  type FakeHcloudServerInput,
  type FakeHcloudServerStatus,
  type FakeHcloudServerType,
} from './state.ts';
export { FakeHcloudTokenBucket } from './token-bucket.ts';
