import Kafka
import Testing

/// librdkafka quotes a value it refuses; the wrapper's error keeps the key and the reason only.
@Suite struct ConfigurationErrorTests {
    @Test("A refused property value never appears in the error, which still names the property")
    func refusedValueIsNotQuoted() {
        let secret = "pa/ss?w#rd%:@+" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        var configuration = KafkaProducer.Configuration(bootstrapServers: "127.0.0.1:1")
        // An enum-valued property: librdkafka validates it at once and quotes what it got.
        configuration.properties = ["security.protocol": secret]
        #expect {
            _ = try KafkaProducer(configuration: configuration)
        } throws: { error in
            let text = "\(error)"
            return !text.contains(secret) && text.contains("security.protocol")
        }
    }
}
