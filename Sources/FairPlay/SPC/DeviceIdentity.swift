/// The device identity TLLV (guide table 3-3).
package struct DeviceIdentity: Hashable, Sendable {
    package var version: UInt32
    /// 0 unknown, 1 Apple living room, 2 Apple mobile, 3 Apple desktop, 4 Apple spatial, 127 Apple
    /// unknown, 128 partner living room, 255 partner unknown.
    package var deviceClass: UInt32
    package var vendorHash: UInt64
    package var productHash: UInt64
    package var fairPlayVersionREE: UInt32
    package var fairPlayVersionTEE: UInt32
    /// `00 major minor patch`.
    package var osVersion: UInt32

    package init(
        version: UInt32 = 1, deviceClass: UInt32, vendorHash: UInt64, productHash: UInt64, fairPlayVersionREE: UInt32, fairPlayVersionTEE: UInt32,
        osVersion: UInt32
    ) {
        self.version = version
        self.deviceClass = deviceClass
        self.vendorHash = vendorHash
        self.productHash = productHash
        self.fairPlayVersionREE = fairPlayVersionREE
        self.fairPlayVersionTEE = fairPlayVersionTEE
        self.osVersion = osVersion
    }

    static let minimumLength = 36
}

/// The legacy device info TLLV (guide table 3-4).
package struct DeviceInfo: Hashable, Sendable {
    package var deviceType: UInt64
    package var osVersion: UInt32
    package var version: UInt32

    package static let mac: UInt64 = 0x358c_41b1_ec78_f599
    package static let appleTV: UInt64 = 0xc150_0767_c86c_1fae
    package static let iOS: UInt64 = 0x8551_fd5e_31f4_79b3
    package static let watch: UInt64 = 0x5da8_6ac0_c571_55dc

    package init(deviceType: UInt64, osVersion: UInt32, version: UInt32 = 1) {
        self.deviceType = deviceType
        self.osVersion = osVersion
        self.version = version
    }

    package var deviceTypeName: String {
        switch deviceType {
        case Self.mac: "mac"
        case Self.appleTV: "apple-tv"
        case Self.iOS: "ios"
        case Self.watch: "watch"
        default: "unknown"
        }
    }

    static let minimumLength = 16
}

/// The VM device information TLLV (guide table 3-14). Version 0 means not in a virtual machine.
package struct VMDeviceInfo: Hashable, Sendable {
    package var version: UInt32
    package var hostDeviceClass: UInt32
    package var hostOSVersion: UInt32
    package var hostVirtualizationProtocol: UInt32
    package var guestDeviceClass: UInt32
    package var guestOSVersion: UInt32
    package var guestVirtualizationProtocol: UInt32

    package init(
        version: UInt32 = 1, hostDeviceClass: UInt32, hostOSVersion: UInt32, hostVirtualizationProtocol: UInt32, guestDeviceClass: UInt32,
        guestOSVersion: UInt32, guestVirtualizationProtocol: UInt32
    ) {
        self.version = version
        self.hostDeviceClass = hostDeviceClass
        self.hostOSVersion = hostOSVersion
        self.hostVirtualizationProtocol = hostVirtualizationProtocol
        self.guestDeviceClass = guestDeviceClass
        self.guestOSVersion = guestOSVersion
        self.guestVirtualizationProtocol = guestVirtualizationProtocol
    }

    /// True when the SPC says the device runs inside a virtual machine.
    package var isVirtualMachine: Bool { version != 0 }

    static let minimumLength = 28
}
