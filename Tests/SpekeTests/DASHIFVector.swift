/// The DASH-IF CPIX test vector "EncryptedContentKeys" and the private key of its recipient,
/// from Dash-Industry-Forum/cpix-test-vectors at e5cef98 (MIT License, Copyright (c) 2016 Axinom;
/// generated 2019-01-03 with Axinom.Cpix v2.2.0). `EncryptedContentKeys.xml` is kept byte for
/// byte (its UTF-8 byte order mark included; the lines below join without line breaks); the key is
/// `Cert1.pfx` (password `Cert1`, a 4096-bit RSA key) exported with `openssl pkcs12 -nocerts -nodes`.
/// The plaintext keys are the ones the vector's Readme lists.
enum DASHIFVector {
    static let encryptedContentKeys =
        "\u{FEFF}" + """
            <?xml version="1.0" encoding="utf-8"?><CPIX xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="h\
            ttp://www.w3.org/2001/XMLSchema" xmlns="urn:dashif:org:cpix" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" xml\
            ns:enc="http://www.w3.org/2001/04/xmlenc#" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc"><DeliveryDataList>\
            <DeliveryData><DeliveryKey><ds:X509Data><ds:X509Certificate>MIIFHzCCAwegAwIBAgIQOUR2UTpsGLxKca7jlNOzQDANBgkqhk\
            iG9w0BAQ0FADAgMR4wHAYDVQQDExVDUElYIEV4YW1wbGUgRW50aXR5IDEwHhcNMTYwODExMDcyMTMxWhcNMzkxMjMxMjM1OTU5WjAgMR4wHAYD\
            VQQDExVDUElYIEV4YW1wbGUgRW50aXR5IDEwggIiMA0GCSqGSIb3DQEBAQUAA4ICDwAwggIKAoICAQCrNH2BTPt13OcVznobk3xTWLLKb5zegl\
            DNmr5ovZ8KJcV1Ibd32MkxAG7mf5nvEqxT2aDI8L4PB9HZmLvOTBHvLt38VY/jkEGQzsycYyrLLUxJoFGSRNNAQJP88aZy2D3E0W+pPYJedXNZ\
            /7+cX5uYCufTqfwmfRu2FBrZFs4s1WI1UFqDdORYhCqlSrnqWfFKbZkbUenc/YrGDJmhrSC1hDZERilDiWAK/9sE3G9/nQLuwLEnBD10/hekg1\
            HVyAWzCF0t03Y2e6ddBOYZbLlaib5BoaM8lZpJuis3VUd74h54sylyDI+b8rHzqwq+FpbyO+OjU0lLJ1mWfkYjNJBwMViXigNF6KK8NgYjXG02\
            NUbxXyeer9tiORWbadsWaNrVD8uR7IZ457yYEGLGxbGO0DKicda4Fa1u+T8ZIIiZNgEoSLULlftXR4gNvKp5N3AHW+QDK+z1hai8AYaZt2R7+x\
            j0mYA2Ek2qYIPLxI1IDMHJCZbjNK/Pfh70HvZ48GoGEtbNINbl0cQCy/IyDKdoullfaSNSK1cbaJXY8PBAxFs9rRIM4iQFPPqW2Uq+nrBdZwjA\
            EM/kXQ1q6QMwsszxPjbGjbC3oXXW/3AsU8K9tHh/dMifAathdzyb0C/rQsjXQUPnKI9MJAb9sjktXGoX6gIdAyGd++2txtzo/dpSpQIDAQABo1\
            UwUzBRBgNVHQEESjBIgBA+TVN76ax88utZ3FhloYo3oSIwIDEeMBwGA1UEAxMVQ1BJWCBFeGFtcGxlIEVudGl0eSAxghA5RHZROmwYvEpxruOU\
            07NAMA0GCSqGSIb3DQEBDQUAA4ICAQBsTD35Xdprq9dQKYXObX96QZCMfd5oFDQCK9/43+w6eyhsbPNjyE2EwlCUMtJfgRwbnc5OzzGSss8jgQ\
            cdx6ZI5hfilE+aDBFTO7XgSvCM4oEQ4FWNtkgIpYaB6iAsZEarf31kR6MiRRfSqfLk/Pg+9wB9vuSSNYxQAjnNYtSM/+3DzKhJZ6ZoTxTYAmFr\
            ZF9E2XTY5eLwM8Fvnpe2lss8bjuE9UM1qj5PutiPzZQWSSFTxr99ylNWQFt2YmpIzWfAedOF1AL1g8K5z3eLn2B6xG0ZkgaFNsnKYR6L8ei0eC\
            VKFxMB0UPXfSx0Z2DloPudII7L5dYFQrAB52GT3PDS+rHlfhmQ8uZ7nCi+a3h3XopuaDjv9I2KbnMZh7vY7twbVNXyz+pIs9lh49ol6w+Hjufw\
            fj9+maMvfuRnCP/m9oyT/qnwvOBX6FDu8qEr0TXRGkdYS8NIol/V3IKgKrc5+eo/4wqCqUePUz0ZmiCbtjIOu7kun2HYMyu2crLaO9BH1usS5U\
            GdrYCyg/0vukIylcYwAPc3HpeIt2yaCdMKJf/GhP+E0QlYTuPo7Bx4+00j7B33w36LFEbC3pxaWqltZ8Iy4tHl0rmcer/p1gGrRZTkqOQ7zqCl\
            7xWjGK82bh5TooT7hDBTMVcgRRTYwUy4gnY4TgXERovhHQwgGKrhxw==</ds:X509Certificate></ds:X509Data></DeliveryKey><Docu\
            mentKey Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc"><Data><pskc:Secret><pskc:EncryptedValue><enc:E\
            ncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p" /><enc:CipherData><enc:CipherValue\
            >I3LkAdeFjCWpXuOtjYnB45VgcyFM9COJz3kxpFGz3EJQjyDNEIpKShN1ERZ0Yzm0n51SAz5tIESewG1FL+AOLMsRN85swJcMRMrk9sUMqHbaa\
            Obzj6AXMIBodastxeIqM0T1el9NoeRpr1X9qWBJu64EiXGBQZm2MqduEpWU1MBrHxWVGzqhjtZw5LKcnrj3AAJHzCaZpAy4IF3hXzpTgu5L/HI\
            eRNM5/J8NimQYxSi6hsrAKtTaogm3QMAa0VaK/uY3K+dIuOGWR5YbrbmnYsX39RNF8UIkkmWpJ4GldfP5FDLJdf18x0k2CsTvKQB5E4Ld/eyPD\
            KoYej4iEGlQPasBqurp2sAy7tsaVW6x+5nR0wcOhBrPynX1PAeZvQdLoJq1w81WzVm05R7Hi8Tjgb8GZ/MuBESxMxrCCpoCvHUN+MqdMFNCvJ4\
            IwRFYsKfvIxa3SJCL6geGnwpnpdZ79mLCygIaXRSeget7ivNwEiRw6jTVdvZ+w914Inl8q/0j6XYzwSImiGi7Wk6pTx0lLBmVT8Uxlaj9JHB/g\
            TOSJ93RsP7/7YZswjCt/UCFrGi1cv+x8NrGCHTCuGcXcjbK4z+E2rUeXCR4GUlGNaZxeFRE5g9VdiTFGeN2TMTava8yPraXd7rruQ+butsDiU0\
            Cgq0OVbkP2Fn5u3rArpc0bJw=</enc:CipherValue></enc:CipherData></pskc:EncryptedValue></pskc:Secret></Data></Docum\
            entKey><MACMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#hmac-sha512"><Key><enc:EncryptionMethod Al\
            gorithm="http://www.w3.org/2001/04/xmlenc#rsa-oaep-mgf1p" /><enc:CipherData><enc:CipherValue>AqhBsU0BzsflY9+Qe\
            9l9P1Htf+vXf+i0X24qycdXVCoEY9lRSh33nWf54YWso1H5rdmaA0PeJWdA7DYPXJ/SceevPTDeAERf/Sdyk6aiK4CB5RaewdkwBw4bZrw9vo3\
            07k2Vg+9N/P8jSAzUR6oi2IZQ8RxBOrRLTpq3fVRCB12NRPdKTT4o3fA5M842QYXQ5u2JjRTFzI6LY5hNgvXzPv1tfXN/Ru5PwYaJb+BQ2UQvP\
            WFWJ4w0kBY65TZ8L41f0d0ncti7kuSFFmwOlPYQDILwNirhn/Pnfz1FfTbi2DvRJzsX9vunLlfZ2oqyyV3AXL3BpVw2Ww/5iH5KbzDZN45PAlH\
            Cy4HgX4VdsgVVzNXW6tK46ZerE5woUbuf1x0zk0Inp9x4UhF2N6YP5RULsDS3RBcHSrkUKjpO6LVru97cpbBeUopvOKml1jFvbTvoxbiDucLWM\
            GkB2q+3UcLJv4dEE/CjZSNTI7IFrJyyp1XjDkutZwUHVH89Liqh/Do7eeNp5qIkrId9e1bhlhqKWPcFEvRTZq0HnRD2p+kzgRr4WfTSil3/VfM\
            k18NuDnvmLf0V8ItQSPeC+Y10TghO7OMyzh9P5xn/vBOL/CwGRSvPTYy9BQYgxcXgFYsk6DuXzXvOfQWKWddi7xWuCLuDJsSOtUXKQwh22xer9\
            i3PuBM=</enc:CipherValue></enc:CipherData></Key></MACMethod></DeliveryData></DeliveryDataList><ContentKeyList>\
            <ContentKey kid="bd5adf51-cf04-410f-aac3-ec63a69e929e"><Data><pskc:Secret><pskc:EncryptedValue><enc:Encryption\
            Method Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc" /><enc:CipherData><enc:CipherValue>mGwyX8hfOluT\
            OPFM5QOT8zhkpyDA/OnIGTJs/qQHSE0Vy8X2nkzfCz/VxfMUb6A4</enc:CipherValue></enc:CipherData></pskc:EncryptedValue><\
            pskc:ValueMAC>BXBr0hPLWOeh/I//chGl3laznIMiZVR0gB4dhRDMyJ6gUHZQgX1R30oebB7ftCwWCe9pK/9h2NQ0iVMm93/RYg==</pskc:V\
            alueMAC></pskc:Secret></Data></ContentKey><ContentKey kid="d2920429-87ab-41e6-a4c5-a8c836b6312e"><Data><pskc:S\
            ecret><pskc:EncryptedValue><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc" /><en\
            c:CipherData><enc:CipherValue>pqcG3BI/85LYhUUcszYkPmLm2FJO3wx3DqeqfdAb8zafGrvx7Ge0xFdW0o1aAeUQ</enc:CipherValu\
            e></enc:CipherData></pskc:EncryptedValue><pskc:ValueMAC>knhjNjCqgnnmOtCobbSHOLfkWJUqvryhdhIT6cINCAdXgKQsbwNzyM\
            TJZRyYomthamtmCW6Tk8WFs5hn3Lmc3g==</pskc:ValueMAC></pskc:Secret></Data></ContentKey><ContentKey kid="e17ba4b8-\
            faff-4d30-bcba-7485e3f2e884"><Data><pskc:Secret><pskc:EncryptedValue><enc:EncryptionMethod Algorithm="http://w\
            ww.w3.org/2001/04/xmlenc#aes256-cbc" /><enc:CipherData><enc:CipherValue>srgTGeYWvXPshuw1stNJkAuyEeJpKIiWZQIfPD\
            tiM00cGIZQiwTbbbkRxZKPmgb2</enc:CipherValue></enc:CipherData></pskc:EncryptedValue><pskc:ValueMAC>PsVaUranGyZm\
            e12kp//CQEWgX1yadadCspT+DSXTHKS8LKf6rjbQ+YC9IxSRp50mIazVejLsYpktUFagc3OZZw==</pskc:ValueMAC></pskc:Secret></Da\
            ta></ContentKey><ContentKey kid="0ae6b9ad-92d2-4ebe-882b-1d07dee70715"><Data><pskc:Secret><pskc:EncryptedValue\
            ><enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes256-cbc" /><enc:CipherData><enc:CipherVa\
            lue>/pFqJhrBAqXM43LDclPdxGpkoO3WLXfhb4Uccm1ssD3ttpDEOedl7c2s+0RrSlDH</enc:CipherValue></enc:CipherData></pskc:\
            EncryptedValue><pskc:ValueMAC>qno1woAH3rwaadcV1Gt464H9jRNPtqHKelELjUQReFMAWoVwWpHtrQ1yz8ax2MTv/wrhN24mZU1wL5MN\
            BfulDg==</pskc:ValueMAC></pskc:Secret></Data></ContentKey></ContentKeyList></CPIX>
            """

    /// KID -> content key, base64 (the vector's Readme).
    static let plaintextKeys = [
        "bd5adf51-cf04-410f-aac3-ec63a69e929e": "3rWoHYasQubO6HbJGrGtLw==",
        "d2920429-87ab-41e6-a4c5-a8c836b6312e": "O5w9FdZiwmQK4uIXzAziaQ==",
        "e17ba4b8-faff-4d30-bcba-7485e3f2e884": "Cwu/3hSBBRQ7SurBdZD5ow==",
        "0ae6b9ad-92d2-4ebe-882b-1d07dee70715": "FB6/Eck9Y9SXy6bY8UU/Mw==",
    ]

    static let cert1PrivateKeyPEM = """
        -----BEGIN PRIVATE KEY-----
        MIIJQwIBADANBgkqhkiG9w0BAQEFAASCCS0wggkpAgEAAoICAQCrNH2BTPt13OcV
        znobk3xTWLLKb5zeglDNmr5ovZ8KJcV1Ibd32MkxAG7mf5nvEqxT2aDI8L4PB9HZ
        mLvOTBHvLt38VY/jkEGQzsycYyrLLUxJoFGSRNNAQJP88aZy2D3E0W+pPYJedXNZ
        /7+cX5uYCufTqfwmfRu2FBrZFs4s1WI1UFqDdORYhCqlSrnqWfFKbZkbUenc/YrG
        DJmhrSC1hDZERilDiWAK/9sE3G9/nQLuwLEnBD10/hekg1HVyAWzCF0t03Y2e6dd
        BOYZbLlaib5BoaM8lZpJuis3VUd74h54sylyDI+b8rHzqwq+FpbyO+OjU0lLJ1mW
        fkYjNJBwMViXigNF6KK8NgYjXG02NUbxXyeer9tiORWbadsWaNrVD8uR7IZ457yY
        EGLGxbGO0DKicda4Fa1u+T8ZIIiZNgEoSLULlftXR4gNvKp5N3AHW+QDK+z1hai8
        AYaZt2R7+xj0mYA2Ek2qYIPLxI1IDMHJCZbjNK/Pfh70HvZ48GoGEtbNINbl0cQC
        y/IyDKdoullfaSNSK1cbaJXY8PBAxFs9rRIM4iQFPPqW2Uq+nrBdZwjAEM/kXQ1q
        6QMwsszxPjbGjbC3oXXW/3AsU8K9tHh/dMifAathdzyb0C/rQsjXQUPnKI9MJAb9
        sjktXGoX6gIdAyGd++2txtzo/dpSpQIDAQABAoICAAV2CqzVsk27qqlg6Tc4+KXF
        9goMDmJwoLg2P+2iYtDVjJtkZHBPu3czLtZuapAcNeAE2KKgP0fGdZSt0QvPFGFf
        SthyOEFHiDfgyNkSNrq9aqoMkZ2LUXvCs5XFdYxDRpEhJyEsY5y0vWW5CTkpOZLb
        gjKXwQHPStN/h622EwSOF/BgbEq2L1R9fsi//fcyQEaiAVjEP6P7eHJB06K7HYh8
        u6ho3ocXejdPmwJoL6xP61iHT/9RHM6/Di0CvVkG5NuloCdGkAZD4n5OmjJka/Mt
        4qJAUC8uDHpelGNS9pFGkLdD68YGDYypbLC7m3+dw9ndPDEpBnT9v9dTltQnqJXG
        KfsmkRSmHt3acBI5eUbJEbTyRh324EIhNxJ5WH7EMVYFGHdf5aXKpZ1XagtC6fmP
        Lite0wzYwxblMizzeWbBBhuhPpWF1PfaE77OEoRWRSfCfcKK8b6f8Oi+UOkaZ/hM
        8gQfKgGP9GmIzDKbcMklbOX6G+W2Rqj/mn6NcIvzU8sA7L+i8kIUgNRzJB2f9g/w
        jk5UjhNNz2aTrPmVpLbhOD2Z+V5OSMihZ+30iM/0swVxZqkLlfoJq1VEcwKHVEeK
        uzEGPpeNsp+11XOUftjYBbD/4lXiBa06CT+KpcujlqziwyxrENfwbJMI7NAAVGg5
        Yehk/5Y9GQnO1ij1KZ4RAoIBAQDmpWinbcfoVrpJ540ACQdS2DrWva10q/76XY08
        7uES5NMH3peiWhUMfDZWVD14QCUChcI9o6PiLudBwn7KKRP0AN+tF8/xD0YAIZvy
        i8ddPfd9wi5k+rf30SEePIZsqKoxVqO7/n5Dd24vBf3VIQKjITbqdJoqunL6UBTB
        fwkrt8Mc95wLE5xWp9T4rbVqMo/88Gv08V6RtJN5z50DsIvPScvX4DDoxFjRaTb8
        2Pwa6yg3K/ZPyWR6qWdqrbwS5V0ZjDlsMlpe08G6kOSZFQaKUL2FX9vcPHQtStms
        ySkdOxLcuE6gPUxLKeMxi1zg1xbcIaeJZ0CK5wfRy+C5i3INAoIBAQC+Blr24j9W
        wDlb31FJ5mLjG2DAvLH7awY9p0FfkCq4WBJD3vW22lHRpmQsJCD5Cj69e5R2w/zl
        T+pSgsTfmzD0QbgQOt2q3MyDRUXJto3/fDUEF4pbwnkbhdda2flqEvwbpSmYXPPg
        9r/Pjqd3XYEV3CivCdDDYGr+c494ByfHLUrFaJU7fjeR5f8sCsa2dJ0mNF5wSbnQ
        SaPIYI+8Oo+N4cTVYdQt5ca5wBwF/IG7jZgU+FkP0yyYMk2bkUeErlhSIYzFc5zX
        lR0ckD5eG9NYn8Ozm7vQ7fKHTJz8HLJsyUkF8EvIZTmNu8y9zfgE+/HVd+gMEYbP
        WLUI+FIhlPT5AoIBABvIFMEGEixENhAs2ekFLWKnNP8kvb3t8bqKhjaut2GlOl4a
        S718iEiGtazUXMsdPtf88JaoHVdjOuvK16bWJ9ceO9MHqT5qDo55feVLPOpYSnVV
        bG0xXfN1tz2DINX5wvZKb1J3pxHNUvJLEHYZkc3AdHLtNJys9Kh9+OINwTcI3XGh
        yaPz6sLtWFPT6KQwDvPyqa5JXJDEZXcosMr++vgu9WS9VmbTL7eZqsvt/v/nD2MF
        4pddtMKpoRFSd/L2ua4YG9qSfhwp+Y3VYhOmWrFSZGGqWDtA9OV3vJx5ZoBk2zLG
        6IGYoJX1J66SEM/sWI6PZzS/wSB6D5EPs7PlvgkCggEBAItKzVM79YH51hHqWQP6
        xXIEl5+wsibCBQkcmWcbnrUSmhD2Vtd6oY80kSlqMmFbiTIMbH/CmpbdRb7F7Nqc
        P/5MTkhXXjXpNGDlXorGLsCgo5wkRV+N5oiuS3ZlYdbHo9X/88WkHYFCXsgeodN1
        zzHe+FOWtlkBTGzI+NnbJOVz5eNfDkVV+BYSqkH2hEMqqCdhK/jTkkmEMXKolbQ8
        mQ4/+LERzR731/xBPkmFFvQMjvaQNXjMK1xFQ25NyEcSJdvOjAoQ/V9qBrTxZ0ZE
        z1+ffS0jc0FrquRS3KBRyNjFk6muw15aFR44E5Tubmf45wS7qHVwQ4mqVMoGfO3w
        6sECggEBAJm1W4tbcb76NzQXb8vdwoVVjLIq6cuyJli1abZGUvkOwnMEe6qcKKIZ
        9QY5YWL/l2yfu9Rth0/U7AmXb/exhrLLXR+KfokXytz3DZd3QhNwwzDzbTLX7oxa
        osLFdWvGWSQtMBSnyrv8Y93aTJ70QddjBmkJeamRHQ8E5mxF7HoNhYsufBzkS/P1
        mUlUFOv7jmGvqmNgTugUX7UdGCdJkts2HcKfv5exJJGPrwRRyF9keqGmqM9k005W
        qF8frNqkGwgErxKrNLqy2LSb1DrEIv0gydx1iX0L1fDkAI0xe7aSiAhw3AkvB1xK
        kWhBThtdJglvFRSKZYebCWOyG//S0Vo=
        -----END PRIVATE KEY-----
        """
}
