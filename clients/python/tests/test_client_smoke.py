from conftest import LiveServer


def test_server_up(server: LiveServer) -> None:
    c = server.client()
    data = c.get_vehicle_data(server.demo.vins["driving"])
    print(data.charging.battery_level, data.diagnostics.odometer)
