"""The SM clock and board power of one GPU during a timed section, read through NVML with ctypes
(libnvidia-ml.so.1, which the driver installs; nothing else is needed). Where NVML or the device is
missing, a window reports NaN. The same method as `tessera bench gemm` (tools/tessera/energy.c): a
sampler thread reads the clock and the power every PERIOD_S seconds while a window is open, plus one
sample at start and one at stop; the energy is the difference of the board's energy counter where it
has one and the window lasts at least COUNTER_MIN_S, else the sampled mean power times the window.

    meter = Meter(pci_bus_id="00000000:3B:00.0")   # or Meter() on a one-GPU machine
    meter.start(); ...; window = meter.stop()       # window.sm_mhz, .board_w, .joules, .seconds
"""
import ctypes
import threading
import time
from typing import NamedTuple

PERIOD_S = 0.010        # between two samples of the sampler thread
COUNTER_MIN_S = 0.1     # shorter windows take the sampled power (the counter steps in mJ, tens of ms apart)
NVML_SUCCESS = 0        # nvmlReturn_t: the call succeeded
NVML_CLOCK_SM = 1       # nvmlClockType_t: the streaming multiprocessors' clock
NAN = float("nan")


class Window(NamedTuple):
    """What a window measured; NaN where nothing was."""
    sm_mhz: float = NAN      # mean of the SM clock samples (MHz)
    board_w: float = NAN     # joules / seconds: the mean board power (W)
    joules: float = NAN      # energy the board drew during the window
    seconds: float = NAN     # host wall time from start to stop
    samples: int = 0         # clock and power samples taken
    from_counter: bool = False  # joules from the energy counter (else from the sampled power)

    def merge(self, other):
        """The total of two windows (the EMPTY window is the identity): seconds, joules and samples add
        up, the clock is the samples' mean, the power joules / seconds; a NaN window makes it NaN."""
        if self.samples == 0 and self.seconds == 0:
            return other
        samples = self.samples + other.samples
        mhz = ((self.sm_mhz * self.samples + other.sm_mhz * other.samples) / samples
               if self.samples and other.samples else NAN)
        joules, seconds = self.joules + other.joules, self.seconds + other.seconds
        return Window(mhz, joules / seconds if seconds else NAN, joules, seconds, samples,
                      self.from_counter and other.from_counter)


EMPTY = Window(seconds=0.0, joules=0.0)


class Meter:
    """NVML's view of one GPU, found by PCI bus id (as CUDA names it, so CUDA_VISIBLE_DEVICES is
    respected), or, without one, the only GPU NVML sees. `available` says whether it measures;
    `why` why not."""

    def __init__(self, pci_bus_id=None, library="libnvidia-ml.so.1"):
        self.available, self.why = False, ""
        self._nvml, self._device, self._thread = None, ctypes.c_void_p(), None
        try:
            nvml = ctypes.CDLL(library)
            for name in ("nvmlInit_v2", "nvmlShutdown", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2",
                         "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetClockInfo", "nvmlDeviceGetPowerUsage",
                         "nvmlDeviceGetTotalEnergyConsumption", "nvmlDeviceGetEnforcedPowerLimit"):
                getattr(nvml, name).restype = ctypes.c_int
        except (OSError, AttributeError) as e:
            self.why = f"NVML not found ({library}: {e})"
            return
        if nvml.nvmlInit_v2() != NVML_SUCCESS:
            self.why = "nvmlInit_v2 failed"
            return
        self._nvml = nvml
        count = ctypes.c_uint(0)
        if pci_bus_id and nvml.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(),
                                                                ctypes.byref(self._device)) == NVML_SUCCESS:
            self.available = True
        elif (nvml.nvmlDeviceGetCount_v2(ctypes.byref(count)) == NVML_SUCCESS and count.value == 1
              and nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self._device)) == NVML_SUCCESS):
            self.available = True
        else:
            self.why = f"NVML has no device at PCI bus id {pci_bus_id}" if pci_bus_id else \
                f"NVML sees {count.value} devices and no PCI bus id was given"

    def power_limit_w(self):
        """The board's enforced power limit (the cap) in W; NaN if unknown."""
        mw = ctypes.c_uint(0)
        if self.available and self._nvml.nvmlDeviceGetEnforcedPowerLimit(self._device, ctypes.byref(mw)) == 0:
            return mw.value / 1000.0
        return NAN

    def _energy_mj(self):
        mj = ctypes.c_ulonglong(0)
        ok = self._nvml.nvmlDeviceGetTotalEnergyConsumption(self._device, ctypes.byref(mj)) == NVML_SUCCESS
        return mj.value if ok else None

    def _sample(self):
        mhz, mw = ctypes.c_uint(0), ctypes.c_uint(0)
        if (self._nvml.nvmlDeviceGetClockInfo(self._device, NVML_CLOCK_SM, ctypes.byref(mhz)) == NVML_SUCCESS
                and self._nvml.nvmlDeviceGetPowerUsage(self._device, ctypes.byref(mw)) == NVML_SUCCESS):
            self._mhz.append(mhz.value)
            self._w.append(mw.value / 1000.0)

    def _sampler(self):
        while not self._stop.wait(PERIOD_S):
            self._sample()

    def start(self):
        """Opens a window (a first sample, then the sampler thread); False where unavailable or open."""
        if not self.available or self._thread is not None:
            return False
        self._mhz, self._w, self._stop = [], [], threading.Event()
        self._t0, self._e0 = time.perf_counter(), self._energy_mj()
        self._sample()
        self._thread = threading.Thread(target=self._sampler, daemon=True)
        self._thread.start()
        return True

    def stop(self):
        """Closes the window start opened and returns it; without one, a NaN window."""
        if self._thread is None:
            return Window()
        self._stop.set()
        self._thread.join()
        self._thread = None
        self._sample()
        e1, seconds = self._energy_mj(), time.perf_counter() - self._t0
        if not self._mhz:
            return Window(seconds=seconds)
        from_counter = self._e0 is not None and e1 is not None and e1 > self._e0 and seconds >= COUNTER_MIN_S
        mean_w = sum(self._w) / len(self._w)
        joules = (e1 - self._e0) / 1000.0 if from_counter else mean_w * seconds
        return Window(sum(self._mhz) / len(self._mhz), joules / seconds if seconds > 0 else mean_w, joules, seconds,
                      len(self._mhz), from_counter)

    def close(self):
        """Closes an open window and shuts NVML down."""
        self.stop()
        if self._nvml is not None:
            self._nvml.nvmlShutdown()
            self._nvml, self.available = None, False


def per_ghz(tflops, window):
    """TF/s per GHz of SM clock (NaN where the clock is unknown)."""
    return tflops / (window.sm_mhz / 1000.0) if window.sm_mhz > 0 else NAN


def per_joule(tflops, window):
    """TFLOP per joule: TF/s / W (NaN where the power is unknown)."""
    return tflops / window.board_w if window.board_w > 0 else NAN
