"""Generated from autoport's vehicle commands: the auto-api level-13 setters by clients/python/scripts/generate_models.py.

Do not edit: run the script. Every command as a function of its capability, its
arguments typed (enums as Literals, quantities with their units), returning the
`CommandRequest` that `send_command` sends:

    from autoport_client import commands
    client.send_command(vin, commands.doors.lock_unlock_doors(locks_state="locked"))
"""

# ruff: noqa: E501
from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from autoport_client.models._base import Quantity
from autoport_client.types import CommandRequest, command_argument

AngleUnit = Literal["degrees", "radians", "revolutions"]
DurationUnit = Literal["seconds", "minutes", "hours", "days", "weeks", "months", "milliseconds"]
ElectricCurrentUnit = Literal["amperes", "milliamperes", "kiloamperes"]
FrequencyUnit = Literal["hertz", "millihertz", "kilohertz", "megahertz", "gigahertz", "times_per_minute", "times_per_hour", "times_per_day"]
LengthUnit = Literal["meters", "millimeters", "centimeters", "decimeters", "kilometers", "megameters", "inches", "feet", "yards", "miles", "scandinavian_miles", "nautical_miles"]
SpeedUnit = Literal["meters_per_second", "kilometers_per_hour", "miles_per_hour", "knots"]
TemperatureUnit = Literal["kelvin", "celsius", "fahrenheit"]


def request(capability: str, command: str, arguments: Mapping[str, Any]) -> CommandRequest:
    given = {name: value for name, value in arguments.items() if value is not None}
    return CommandRequest(capability, command, command_argument(given))


class Browser:
    """The commands of `browser`."""

    @staticmethod
    def load_url(*, url: str) -> CommandRequest:
        """Open a web page in the vehicle's browser (`browser.load_url`)."""
        return request("browser", "load_url", {"url": url})


browser = Browser()


class Charging:
    """The commands of `charging`."""

    @staticmethod
    def start_stop_charging(*, status: Literal["not_charging", "charging", "charging_complete", "initialising", "charging_paused", "charging_error", "cable_unplugged", "slow_charging", "fast_charging", "discharging", "foreign_object_detected", "conditioning", "flap_open", "ready_for_charging"]) -> CommandRequest:
        """Start and stop charging (`charging.start_stop_charging`)."""
        return request("charging", "start_stop_charging", {"status": status})

    @staticmethod
    def set_charge_limit(*, charge_limit: float) -> CommandRequest:
        """Set the charge limit (`charging.set_charge_limit`)."""
        return request("charging", "set_charge_limit", {"charge_limit": charge_limit})

    @staticmethod
    def open_close_charging_port(*, charge_port_state: Literal["closed", "open"]) -> CommandRequest:
        """Open and close the charging port (`charging.open_close_charging_port`)."""
        return request("charging", "open_close_charging_port", {"charge_port_state": charge_port_state})

    @staticmethod
    def set_charge_mode(*, charge_mode: Literal["immediate", "timer_based", "inductive", "conductive", "push_button"]) -> CommandRequest:
        """Set the charging mode (`charging.set_charge_mode`)."""
        return request("charging", "set_charge_mode", {"charge_mode": charge_mode})

    @staticmethod
    def set_charging_timers(*, timers: Sequence[Mapping[str, Any]]) -> CommandRequest:
        """Set the charging timers (`charging.set_charging_timers`)."""
        return request("charging", "set_charging_timers", {"timers": timers})

    @staticmethod
    def set_reduction_of_charging_current_times(*, reduction_times: Sequence[Mapping[str, Any]]) -> CommandRequest:
        """Set when the charging current is reduced (`charging.set_reduction_of_charging_current_times`)."""
        return request("charging", "set_reduction_of_charging_current_times", {"reduction_times": reduction_times})


charging = Charging()


class ChassisSettings:
    """The commands of `chassis_settings`."""

    @staticmethod
    def set_driving_mode(*, driving_mode: Literal["regular", "eco", "sport", "sport_plus", "eco_plus", "comfort"]) -> CommandRequest:
        """Set the driving mode (`chassis_settings.set_driving_mode`)."""
        return request("chassis_settings", "set_driving_mode", {"driving_mode": driving_mode})

    @staticmethod
    def start_stop_sports_chrono(*, sport_chrono: Literal["inactive", "active", "reset"]) -> CommandRequest:
        """Start and stop the sports chrono (`chassis_settings.start_stop_sports_chrono`)."""
        return request("chassis_settings", "start_stop_sports_chrono", {"sport_chrono": sport_chrono})

    @staticmethod
    def set_spring_rates(*, current_spring_rates: Sequence[Mapping[str, Any]]) -> CommandRequest:
        """Set the suspension spring rates (`chassis_settings.set_spring_rates`)."""
        return request("chassis_settings", "set_spring_rates", {"current_spring_rates": current_spring_rates})

    @staticmethod
    def set_chassis_position(*, current_chassis_position: Quantity[LengthUnit]) -> CommandRequest:
        """Raise and lower the chassis (`chassis_settings.set_chassis_position`)."""
        return request("chassis_settings", "set_chassis_position", {"current_chassis_position": current_chassis_position})


chassis_settings = ChassisSettings()


class Climate:
    """The commands of `climate`."""

    @staticmethod
    def change_starting_times(*, hvac_weekday_starting_times: Sequence[Mapping[str, Any]]) -> CommandRequest:
        """Change when the climate control starts (`climate.change_starting_times`)."""
        return request("climate", "change_starting_times", {"hvac_weekday_starting_times": hvac_weekday_starting_times})

    @staticmethod
    def start_stop_hvac(*, hvac_state: Literal["inactive", "active"]) -> CommandRequest:
        """Start and stop the climate control (`climate.start_stop_hvac`)."""
        return request("climate", "start_stop_hvac", {"hvac_state": hvac_state})

    @staticmethod
    def start_stop_defogging(*, defogging_state: Literal["inactive", "active"]) -> CommandRequest:
        """Start and stop demisting the windows (`climate.start_stop_defogging`)."""
        return request("climate", "start_stop_defogging", {"defogging_state": defogging_state})

    @staticmethod
    def start_stop_defrosting(*, defrosting_state: Literal["inactive", "active"]) -> CommandRequest:
        """Start and stop defrosting (`climate.start_stop_defrosting`)."""
        return request("climate", "start_stop_defrosting", {"defrosting_state": defrosting_state})

    @staticmethod
    def start_stop_ionising(*, ionising_state: Literal["inactive", "active"]) -> CommandRequest:
        """Start and stop the air ioniser (`climate.start_stop_ionising`)."""
        return request("climate", "start_stop_ionising", {"ionising_state": ionising_state})

    @staticmethod
    def set_temperature_settings(*, driver_temperature_setting: Quantity[TemperatureUnit] | None = None, passenger_temperature_setting: Quantity[TemperatureUnit] | None = None, rear_temperature_setting: Quantity[TemperatureUnit] | None = None) -> CommandRequest:
        """Set the cabin temperatures (`climate.set_temperature_settings`)."""
        return request("climate", "set_temperature_settings", {"driver_temperature_setting": driver_temperature_setting, "passenger_temperature_setting": passenger_temperature_setting, "rear_temperature_setting": rear_temperature_setting})


climate = Climate()


class CruiseControl:
    """The commands of `cruise_control`."""

    @staticmethod
    def activate_deactivate_cruise_control(*, cruise_control: Literal["inactive", "active"], target_speed: Quantity[SpeedUnit] | None = None) -> CommandRequest:
        """Switch the cruise control on and off (`cruise_control.activate_deactivate_cruise_control`)."""
        return request("cruise_control", "activate_deactivate_cruise_control", {"cruise_control": cruise_control, "target_speed": target_speed})


cruise_control = CruiseControl()


class Doors:
    """The commands of `doors`."""

    @staticmethod
    def lock_unlock_doors(*, locks_state: Literal["unlocked", "locked"]) -> CommandRequest:
        """Lock and unlock the doors (`doors.lock_unlock_doors`)."""
        return request("doors", "lock_unlock_doors", {"locks_state": locks_state})


doors = Doors()


class Engine:
    """The commands of `engine`."""

    @staticmethod
    def turn_engine_on_off(*, status: Literal["off", "on"]) -> CommandRequest:
        """Turn the engine on and off (`engine.turn_engine_on_off`)."""
        return request("engine", "turn_engine_on_off", {"status": status})

    @staticmethod
    def enable_disable_start_stop(*, start_stop_enabled: Literal["disabled", "enabled"]) -> CommandRequest:
        """Switch the automatic start-stop on and off (`engine.enable_disable_start_stop`)."""
        return request("engine", "enable_disable_start_stop", {"start_stop_enabled": start_stop_enabled})


engine = Engine()


class Fueling:
    """The commands of `fueling`."""

    @staticmethod
    def control_gas_flap(*, gas_flap_lock: Literal["unlocked", "locked"] | None = None, gas_flap_position: Literal["closed", "open"] | None = None) -> CommandRequest:
        """Open, close, lock and unlock the fuel flap (`fueling.control_gas_flap`)."""
        return request("fueling", "control_gas_flap", {"gas_flap_lock": gas_flap_lock, "gas_flap_position": gas_flap_position})


fueling = Fueling()


class Graphics:
    """The commands of `graphics`."""

    @staticmethod
    def display_image(*, image_url: str) -> CommandRequest:
        """Show an image on the vehicle's display (`graphics.display_image`)."""
        return request("graphics", "display_image", {"image_url": image_url})


graphics = Graphics()


class HeartRate:
    """The commands of `heart_rate`."""

    @staticmethod
    def send_heart_rate(*, heart_rate: Quantity[FrequencyUnit]) -> CommandRequest:
        """Send the driver's heart rate to the vehicle (`heart_rate.send_heart_rate`)."""
        return request("heart_rate", "send_heart_rate", {"heart_rate": heart_rate})


heart_rate = HeartRate()


class Historical:
    """The commands of `historical`."""

    @staticmethod
    def request_states(*, capability_id: int, start_date: datetime | None = None, end_date: datetime | None = None) -> CommandRequest:
        """Ask the vehicle for past states (`historical.request_states`)."""
        return request("historical", "request_states", {"capability_id": capability_id, "start_date": start_date, "end_date": end_date})

    @staticmethod
    def get_trips(*, start_date: datetime | None = None, end_date: datetime | None = None) -> CommandRequest:
        """Ask the vehicle for past trips (`historical.get_trips`)."""
        return request("historical", "get_trips", {"start_date": start_date, "end_date": end_date})

    @staticmethod
    def get_charging_sessions(*, start_date: datetime | None = None, end_date: datetime | None = None) -> CommandRequest:
        """Ask the vehicle for past charging sessions (`historical.get_charging_sessions`)."""
        return request("historical", "get_charging_sessions", {"start_date": start_date, "end_date": end_date})


historical = Historical()


class HomeCharger:
    """The commands of `home_charger`."""

    @staticmethod
    def set_charge_current(*, charge_current: Quantity[ElectricCurrentUnit]) -> CommandRequest:
        """Set the home charger's current (`home_charger.set_charge_current`)."""
        return request("home_charger", "set_charge_current", {"charge_current": charge_current})

    @staticmethod
    def set_price_tariffs(*, price_tariffs: Sequence[Mapping[str, Any]]) -> CommandRequest:
        """Set the home charger's price tariffs (`home_charger.set_price_tariffs`)."""
        return request("home_charger", "set_price_tariffs", {"price_tariffs": price_tariffs})

    @staticmethod
    def activate_deactivate_solar_charging(*, solar_charging: Literal["inactive", "active"]) -> CommandRequest:
        """Switch solar charging on and off (`home_charger.activate_deactivate_solar_charging`)."""
        return request("home_charger", "activate_deactivate_solar_charging", {"solar_charging": solar_charging})

    @staticmethod
    def enable_disable_wi_fi_hotspot(*, wi_fi_hotspot_enabled: Literal["disabled", "enabled"]) -> CommandRequest:
        """Switch the home charger's Wi-Fi hotspot on and off (`home_charger.enable_disable_wi_fi_hotspot`)."""
        return request("home_charger", "enable_disable_wi_fi_hotspot", {"wi_fi_hotspot_enabled": wi_fi_hotspot_enabled})

    @staticmethod
    def authenticate_expire(*, authentication_state: Literal["unauthenticated", "authenticated"]) -> CommandRequest:
        """Sign in to and out of the home charger (`home_charger.authenticate_expire`)."""
        return request("home_charger", "authenticate_expire", {"authentication_state": authentication_state})


home_charger = HomeCharger()


class HonkHornFlashLights:
    """The commands of `honk_horn_flash_lights`."""

    @staticmethod
    def honk_flash(*, honk_time: Quantity[DurationUnit] | None = None, flash_times: int | None = None) -> CommandRequest:
        """Sound the horn and flash the lights (`honk_horn_flash_lights.honk_flash`)."""
        return request("honk_horn_flash_lights", "honk_flash", {"honk_time": honk_time, "flash_times": flash_times})

    @staticmethod
    def activate_deactivate_emergency_flasher(*, emergency_flashers_state: Literal["inactive", "active"]) -> CommandRequest:
        """Switch the hazard lights on and off (`honk_horn_flash_lights.activate_deactivate_emergency_flasher`)."""
        return request("honk_horn_flash_lights", "activate_deactivate_emergency_flasher", {"emergency_flashers_state": emergency_flashers_state})


honk_horn_flash_lights = HonkHornFlashLights()


class Ignition:
    """The commands of `ignition`."""

    @staticmethod
    def turn_ignition_on_off(*, state: Literal["lock", "off", "accessory", "on", "start"]) -> CommandRequest:
        """Turn the ignition on and off (`ignition.turn_ignition_on_off`)."""
        return request("ignition", "turn_ignition_on_off", {"state": state})


ignition = Ignition()


class Lights:
    """The commands of `lights`."""

    @staticmethod
    def control_lights(*, front_exterior_light: Literal["inactive", "active", "active_with_full_beam", "drl", "automatic"] | None = None, rear_exterior_light: Literal["inactive", "active"] | None = None, ambient_light_colour: Mapping[str, Any] | None = None, fog_lights: Sequence[Mapping[str, Any]] | None = None, reading_lamps: Sequence[Mapping[str, Any]] | None = None, interior_lights: Sequence[Mapping[str, Any]] | None = None) -> CommandRequest:
        """Switch the lights on and off (`lights.control_lights`)."""
        return request("lights", "control_lights", {"front_exterior_light": front_exterior_light, "rear_exterior_light": rear_exterior_light, "ambient_light_colour": ambient_light_colour, "fog_lights": fog_lights, "reading_lamps": reading_lamps, "interior_lights": interior_lights})


lights = Lights()


class Messaging:
    """The commands of `messaging`."""

    @staticmethod
    def message_received(*, text: str, handle: str | None = None) -> CommandRequest:
        """Send a message to the vehicle (`messaging.message_received`)."""
        return request("messaging", "message_received", {"text": text, "handle": handle})


messaging = Messaging()


class MultiCommand:
    """The commands of `multi_command`."""

    @staticmethod
    def multi_command(*, multi_commands: Sequence[str]) -> CommandRequest:
        """Send several commands at once (`multi_command.multi_command`)."""
        return request("multi_command", "multi_command", {"multi_commands": multi_commands})


multi_command = MultiCommand()


class NaviDestination:
    """The commands of `navi_destination`."""

    @staticmethod
    def set_navi_destination(*, coordinates: Mapping[str, Any], destination_name: str | None = None) -> CommandRequest:
        """Set the navigation destination (`navi_destination.set_navi_destination`)."""
        return request("navi_destination", "set_navi_destination", {"coordinates": coordinates, "destination_name": destination_name})


navi_destination = NaviDestination()


class Notifications:
    """The commands of `notifications`."""

    @staticmethod
    def notification(*, text: str, action_items: Sequence[Mapping[str, Any]] | None = None) -> CommandRequest:
        """Show a notification in the vehicle (`notifications.notification`)."""
        return request("notifications", "notification", {"text": text, "action_items": action_items})

    @staticmethod
    def action(*, activated_action: int) -> CommandRequest:
        """Answer a notification in the vehicle (`notifications.action`)."""
        return request("notifications", "action", {"activated_action": activated_action})

    @staticmethod
    def clear_notification() -> CommandRequest:
        """Clear a notification in the vehicle (`notifications.clear_notification`)."""
        return request("notifications", "clear_notification", {})


notifications = Notifications()


class ParkingBrake:
    """The commands of `parking_brake`."""

    @staticmethod
    def set_parking_brake(*, status: Literal["inactive", "active"]) -> CommandRequest:
        """Apply and release the parking brake (`parking_brake.set_parking_brake`)."""
        return request("parking_brake", "set_parking_brake", {"status": status})


parking_brake = ParkingBrake()


class ParkingTicket:
    """The commands of `parking_ticket`."""

    @staticmethod
    def start_parking(*, operator_ticket_id: str, ticket_start_time: datetime, operator_name: str | None = None, ticket_end_time: datetime | None = None) -> CommandRequest:
        """Start a parking ticket (`parking_ticket.start_parking`)."""
        return request("parking_ticket", "start_parking", {"operator_ticket_id": operator_ticket_id, "ticket_start_time": ticket_start_time, "operator_name": operator_name, "ticket_end_time": ticket_end_time})

    @staticmethod
    def end_parking() -> CommandRequest:
        """End a parking ticket (`parking_ticket.end_parking`)."""
        return request("parking_ticket", "end_parking", {})


parking_ticket = ParkingTicket()


class PowerTakeoff:
    """The commands of `power_takeoff`."""

    @staticmethod
    def activate_deactivate_power_takeoff(*, status: Literal["inactive", "active"]) -> CommandRequest:
        """Switch the power take-off on and off (`power_takeoff.activate_deactivate_power_takeoff`)."""
        return request("power_takeoff", "activate_deactivate_power_takeoff", {"status": status})


power_takeoff = PowerTakeoff()


class RemoteControl:
    """The commands of `remote_control`."""

    @staticmethod
    def control_command(*, angle: Quantity[AngleUnit] | None = None, speed: Quantity[SpeedUnit] | None = None) -> CommandRequest:
        """Steer the vehicle by remote control (`remote_control.control_command`)."""
        return request("remote_control", "control_command", {"angle": angle, "speed": speed})

    @staticmethod
    def start_control() -> CommandRequest:
        """Start remote control of the vehicle (`remote_control.start_control`)."""
        return request("remote_control", "start_control", {})

    @staticmethod
    def stop_control() -> CommandRequest:
        """Stop remote control of the vehicle (`remote_control.stop_control`)."""
        return request("remote_control", "stop_control", {})


remote_control = RemoteControl()


class RooftopControl:
    """The commands of `rooftop_control`."""

    @staticmethod
    def control_rooftop(*, dimming: float | None = None, position: float | None = None, convertible_roof_state: Literal["closed", "open", "emergency_locked", "closed_secured", "open_secured", "hard_top_mounted", "intermediate_position", "loading_position", "loading_position_immediate"] | None = None, sunroof_tilt_state: Literal["closed", "tilted", "half_tilted"] | None = None, sunroof_state: Literal["closed", "open", "intermediate"] | None = None) -> CommandRequest:
        """Open, close and dim the roof (`rooftop_control.control_rooftop`)."""
        return request("rooftop_control", "control_rooftop", {"dimming": dimming, "position": position, "convertible_roof_state": convertible_roof_state, "sunroof_tilt_state": sunroof_tilt_state, "sunroof_state": sunroof_state})


rooftop_control = RooftopControl()


class TextInput:
    """The commands of `text_input`."""

    @staticmethod
    def text_input(*, text: str) -> CommandRequest:
        """Type text into the vehicle (`text_input.text_input`)."""
        return request("text_input", "text_input", {"text": text})


text_input = TextInput()


class TheftAlarm:
    """The commands of `theft_alarm`."""

    @staticmethod
    def set_theft_alarm(*, status: Literal["unarmed", "armed", "triggered"]) -> CommandRequest:
        """Arm and disarm the theft alarm (`theft_alarm.set_theft_alarm`)."""
        return request("theft_alarm", "set_theft_alarm", {"status": status})


theft_alarm = TheftAlarm()


class Trunk:
    """The commands of `trunk`."""

    @staticmethod
    def control_trunk(*, lock: Literal["unlocked", "locked"] | None = None, position: Literal["closed", "open"] | None = None) -> CommandRequest:
        """Open, close, lock and unlock the boot (`trunk.control_trunk`)."""
        return request("trunk", "control_trunk", {"lock": lock, "position": position})


trunk = Trunk()


class ValetMode:
    """The commands of `valet_mode`."""

    @staticmethod
    def activate_deactivate_valet_mode(*, status: Literal["inactive", "active"]) -> CommandRequest:
        """Switch the valet mode on and off (`valet_mode.activate_deactivate_valet_mode`)."""
        return request("valet_mode", "activate_deactivate_valet_mode", {"status": status})


valet_mode = ValetMode()


class VideoHandover:
    """The commands of `video_handover`."""

    @staticmethod
    def video_handover(*, url: str, starting_time: Quantity[DurationUnit] | None = None, screen: Literal["front", "rear"] | None = None) -> CommandRequest:
        """Play a video in the vehicle (`video_handover.video_handover`)."""
        return request("video_handover", "video_handover", {"url": url, "starting_time": starting_time, "screen": screen})


video_handover = VideoHandover()


class WakeUp:
    """The commands of `wake_up`."""

    @staticmethod
    def wake_up() -> CommandRequest:
        """Wake the vehicle up (`wake_up.wake_up`)."""
        return request("wake_up", "wake_up", {})


wake_up = WakeUp()


class WiFi:
    """The commands of `wi_fi`."""

    @staticmethod
    def connect_to_network(*, network_ssid: str, network_security: Literal["none", "wep", "wpa", "wpa2_personal"], password: str | None = None) -> CommandRequest:
        """Connect the vehicle to a Wi-Fi network (`wi_fi.connect_to_network`)."""
        return request("wi_fi", "connect_to_network", {"network_ssid": network_ssid, "network_security": network_security, "password": password})

    @staticmethod
    def forget_network(*, network_ssid: str) -> CommandRequest:
        """Make the vehicle forget a Wi-Fi network (`wi_fi.forget_network`)."""
        return request("wi_fi", "forget_network", {"network_ssid": network_ssid})

    @staticmethod
    def enable_disable_wi_fi(*, status: Literal["disabled", "enabled"]) -> CommandRequest:
        """Switch the vehicle's Wi-Fi on and off (`wi_fi.enable_disable_wi_fi`)."""
        return request("wi_fi", "enable_disable_wi_fi", {"status": status})


wi_fi = WiFi()


class Windows:
    """The commands of `windows`."""

    @staticmethod
    def control_windows(*, open_percentages: Sequence[Mapping[str, Any]] | None = None, positions: Sequence[Mapping[str, Any]] | None = None) -> CommandRequest:
        """Open and close the windows (`windows.control_windows`)."""
        return request("windows", "control_windows", {"open_percentages": open_percentages, "positions": positions})


windows = Windows()


class Windscreen:
    """The commands of `windscreen`."""

    @staticmethod
    def set_windscreen_damage(*, windscreen_damage: Literal["no_impact_detected", "impact_but_no_damage_detected", "damage_smaller_than_1_inch", "damage_larger_than_1_inch"], windscreen_damage_zone: Mapping[str, Any] | None = None) -> CommandRequest:
        """Report damage to the windscreen (`windscreen.set_windscreen_damage`)."""
        return request("windscreen", "set_windscreen_damage", {"windscreen_damage": windscreen_damage, "windscreen_damage_zone": windscreen_damage_zone})

    @staticmethod
    def set_windscreen_replacement_needed(*, windscreen_needs_replacement: Literal["unknown", "no_replacement_needed", "replacement_needed"]) -> CommandRequest:
        """Report that the windscreen needs replacing (`windscreen.set_windscreen_replacement_needed`)."""
        return request("windscreen", "set_windscreen_replacement_needed", {"windscreen_needs_replacement": windscreen_needs_replacement})

    @staticmethod
    def control_wipers(*, wipers_status: Literal["inactive", "active", "automatic"], wipers_intensity: Literal["level_0", "level_1", "level_2", "level_3"] | None = None) -> CommandRequest:
        """Switch the wipers on and off (`windscreen.control_wipers`)."""
        return request("windscreen", "control_wipers", {"wipers_status": wipers_status, "wipers_intensity": wipers_intensity})


windscreen = Windscreen()
