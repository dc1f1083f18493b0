// Integration tests talk to real servers (Redis, ClickHouse, the venue simulator); give them room.
jest.setTimeout(60_000);
